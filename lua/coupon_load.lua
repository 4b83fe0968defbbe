-- coupon_load.lua: (re)build a campaign's counters from the database, keeping
-- the reservations still in flight.
--
-- The caller holds the campaign's load lock and read the database just before.
-- A pending reservation whose slot the database does not show as taken is
-- applied on top (its slot, ordinal and budget stay taken), so that a reload
-- never hands out a slot that a claim in flight is about to write.
--
-- Reservations confirmed moments ago (the "recent" zset) count as in flight
-- too: their rows may have been committed after the caller's read.
--
-- A template's claim rule (see coupon_deduct.lua) is written only when it is
-- missing or unreadable, in either mode: the service writes a changed rule
-- itself before it answers the change, and this load may have read the
-- database before that change.
--
-- KEYS: 1 budget  2 pending  3 recent, then for each template i (from 0):
--       4+4i template hash  5+4i free  6+4i users  7+4i claim rule
-- ARGV: 1 mode: "missing" (fill only keys that are missing) or "force" (rebuild)
--       2 budget remaining per the database, -1 = no budget
--       then per template, 8 values: template_id, total, limit, value, next
--       (1 + the highest slot held), free (comma list of the unheld slots below
--       next), users ("user=1,2;user2=1": the ordinals each user holds), rule
--       so template i's values start at ARGV[3+8i]; the 8th is its rule.
--
-- Returns {templates rebuilt, 1 if the budget was rebuilt else 0}.

local force = ARGV[1] == 'force'
local n = (#KEYS - 3) / 4

local function csv(s)
  local out = {}
  for v in string.gmatch(s, '%d+') do out[#out + 1] = tonumber(v) end
  return out
end

local function push_all(key, values)
  for i = 1, #values, 1000 do
    redis.call('RPUSH', key, unpack(values, i, math.min(i + 999, #values)))
  end
end

-- The database's view, and which keys this call rebuilds.
local tpl, rebuilt = {}, 0
for i = 0, n - 1 do
  local a = 3 + 8 * i
  local rule = redis.call('GET', KEYS[7 + 4 * i])
  if not rule or not string.match(rule, '^%a+|%-?%d+|%-?%d*|%-?%d*$') then
    redis.call('SET', KEYS[7 + 4 * i], ARGV[a + 7])
  end
  local t = {
    hash = KEYS[4 + 4 * i], free = KEYS[5 + 4 * i], users = KEYS[6 + 4 * i],
    total = tonumber(ARGV[a + 1]), limit = tonumber(ARGV[a + 2]), value = tonumber(ARGV[a + 3]),
    next = tonumber(ARGV[a + 4]), freelist = csv(ARGV[a + 5]), userblob = ARGV[a + 6],
  }
  t.isfree = {}
  for _, s in ipairs(t.freelist) do t.isfree[s] = true end
  t.rebuild = force or redis.call('EXISTS', t.hash) == 0
  if t.rebuild then rebuilt = rebuilt + 1 end
  tpl[ARGV[a]] = t
end
local budget = tonumber(ARGV[2])
local has_budget = budget >= 0
local rebuild_budget = force or redis.call('EXISTS', KEYS[1]) == 0

-- The users each rebuilt template holds, per the database.
for _, t in pairs(tpl) do
  t.held = {}
  if t.rebuild then
    for u, ords in string.gmatch(t.userblob, '([^=;]+)=([%d,]+)') do
      t.held[u] = {}
      for _, o in ipairs(csv(ords)) do t.held[u][o] = true end
    end
  end
end

-- Reservations in flight that the database may not have yet stay taken.
local inflight, seen = {}, {}
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    if not seen[m] then
      seen[m] = true
      inflight[#inflight + 1] = m
    end
  end
end
for _, m in ipairs(inflight) do
  local tid, user, slot, ord, value = string.match(m, '^(%d+)|([^|]*)|(%d+)|(%d+)|(%d+)|')
  local t = tid and tpl[tid]
  if t then
    slot, ord, value = tonumber(slot), tonumber(ord), tonumber(value)
    local in_db = slot < t.next and not t.isfree[slot]
    if not in_db then
      if rebuild_budget and has_budget then budget = budget - value end
      if t.rebuild then
        if t.isfree[slot] then
          t.isfree[slot] = nil
        else
          for s = t.next, slot - 1 do t.isfree[s] = true end
          t.next = slot + 1
        end
        -- An anonymous claim (ordinal 0) holds no user's ordinal.
        if ord > 0 then
          t.held[user] = t.held[user] or {}
          t.held[user][ord] = true
        end
      end
    end
  end
end

-- A rebuilt hash starts a new holders' generation (docs/soldout.md): larger
-- than the one it replaces and at least the server's clock in microseconds,
-- so that a hash lost and rebuilt never repeats a generation an instance
-- remembers (the +1 of each reservation does not catch up with the clock).
local clock = redis.call('TIME')
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
for _, t in pairs(tpl) do
  if t.rebuild then
    local gen = math.max(now_us, (tonumber(redis.call('HGET', t.hash, 'gen') or '') or 0) + 1)
    redis.call('DEL', t.hash, t.free, t.users)
    local free = {}
    for s in pairs(t.isfree) do free[#free + 1] = s end
    table.sort(free)
    push_all(t.free, free)
    local remaining = t.total - t.next + 1 + #free
    if remaining < 0 then remaining = 0 end
    redis.call('HSET', t.hash, 'remaining', remaining, 'next', t.next, 'total', t.total,
      'limit', t.limit, 'value', t.value, 'gen', string.format('%.0f', gen))
    local args = {}
    for u, ords in pairs(t.held) do
      local list = {}
      for o in pairs(ords) do list[#list + 1] = o end
      if #list > 0 then
        table.sort(list)
        args[#args + 1] = u
        args[#args + 1] = table.concat(list, ',')
        if #args >= 1000 then
          redis.call('HSET', t.users, unpack(args))
          args = {}
        end
      end
    end
    if #args > 0 then redis.call('HSET', t.users, unpack(args)) end
  end
end
if rebuild_budget then
  -- Never let a budget that ran below zero read as -1, "no budget".
  if has_budget and budget < 0 then budget = 0 end
  redis.call('SET', KEYS[1], budget)
end
return {rebuilt, rebuild_budget and 1 or 0}
