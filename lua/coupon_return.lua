-- coupon_return.lua: give a confirmed coupon's slot, budget and user ordinal
-- back to the pool (refund under policy "recycle", revoke with return_stock).
-- Runs after the database commit that set the coupon's slot to NULL.
-- Idempotent through its own key: a second call returns nothing twice.
--
-- KEYS: 1 budget  2 template hash  3 free  4 users  5 return key (one per coupon)
-- ARGV: 1 user_id  2 slot  3 ordinal (0: the coupon holds none, a bearer
--       coupon or an anonymous claim; no user's ordinals change)
--       4 value (cents)  5 TTL of the return key (s)
--
-- Returns 1 returned; 2 already returned (duplicate); 3 the template's counters
-- are not loaded (the loader rebuilds them from the database, which already
-- shows the slot free: nothing to do); 4 the slot was already free (a reload
-- from the database ran after the commit: nothing to do).

if redis.call('EXISTS', KEYS[5]) == 1 then return 2 end
local ttl = tonumber(ARGV[5])
local function done(code)
  redis.call('SET', KEYS[5], '1', 'EX', ttl)
  return code
end
local nextslot = tonumber(redis.call('HGET', KEYS[2], 'next') or '')
if not nextslot then return done(3) end
local slot = tonumber(ARGV[2])
if slot >= nextslot or redis.call('LPOS', KEYS[3], ARGV[2]) then return done(4) end

redis.call('LPUSH', KEYS[3], slot)
redis.call('HINCRBY', KEYS[2], 'remaining', 1)
local b = tonumber(redis.call('GET', KEYS[1]) or '-1')
if b >= 0 then redis.call('INCRBY', KEYS[1], ARGV[4]) end
local held = nil
if ARGV[3] ~= '0' then held = redis.call('HGET', KEYS[4], ARGV[1]) end
if held then
  local kept = {}
  for o in string.gmatch(held, '%d+') do
    if o ~= ARGV[3] then kept[#kept + 1] = o end
  end
  if #kept == 0 then redis.call('HDEL', KEYS[4], ARGV[1])
  else redis.call('HSET', KEYS[4], ARGV[1], table.concat(kept, ',')) end
end
return done(1)
