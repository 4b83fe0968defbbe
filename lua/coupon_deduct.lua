-- coupon_deduct.lua: reserve one coupon of a template for a user, atomically.
--
-- Order (the four-key design): the idempotency key first (a replay touches
-- nothing), then whether the template takes claims now (its claim rule), the
-- campaign budget, the template's stock, the user's limit.
-- Every check runs before the first write, so a refusal leaves every key exactly
-- as it was and the idempotency key absent: the shopper can simply try again.
--
-- KEYS (all of one campaign, sharing the hash tag {c<campaign_id>}):
--   1 budget   string: remaining budget in cents, -1 = the campaign has no budget
--   2 template hash: remaining, next (next never-used slot), total, limit, value,
--              gen (the holders' generation: one up with every reservation,
--              new with every rebuild; see docs/soldout.md)
--   3 free     list of slots given back, handed out before fresh ones
--   4 users    hash: user_id -> comma list of the user ordinals they hold
--   5 idem     the idempotency key of this request
--   6 pending  zset of reservations not yet confirmed; member
--              "tid|user|slot|ordinal|value|request_id", score = reserve time (ms)
--   7 rule     string: the template's claim rule, "status|opens|ends|until":
--              status "active" (anything else refuses: "archived" as
--              archived, "campaign" when the template's campaign is paused,
--              any other as paused), then unix ms: claims
--              open at opens, close at ends, and none is taken from until on
--              (absolute validity: the coupon would be born expired); ends and
--              until are empty when there is none. Written by the service
--              before it answers a change of status or claim window, so that
--              every instance follows the change at once.
--   8.. with a campaign cap (ARGV 8 above 0): for each other template of the
--       campaign, its template hash then its users hash (pairs), so that
--       the user's coupons of every template of the campaign are counted
--       (docs/automatic-offers.md)
-- ARGV:
--   1 template_id  2 user_id  3 request_id  4 now (unix ms)  5 idempotency TTL (s)
--   6 attempt (optional): a random word (letters, digits) new for each claim
--     request
--   7 mode (optional): "anon" for an anonymous shopper's claim with a shared
--     code (docs/shared-codes.md): user_id must then be empty, the users hash
--     is neither read nor written, no per-user limit applies and the
--     reservation holds no ordinal (0 in its member and in the answer), as a
--     bearer coupon holds none. Absent or empty: a user's claim.
--   8 campaign cap (optional): the most coupons one user may hold of all the
--     campaign's templates together (their ordinals, this template's
--     included); absent, empty or 0: none. An anonymous claim is not
--     counted against it, as it holds no ordinal.
--
-- The idempotency key holds "P|<member>\n<attempt>" ("P|<member>" without an
-- attempt) while the reservation is pending, then "C|<member>" once confirmed.
--
-- Returns {code, slot, ordinal, remaining, detail, attempt}:
--   0  reserved: slot and ordinal taken, remaining after this claim; as a
--      sixth value (in place of attempt) the campaign's budget left after
--      it, -1 when the campaign has no budget
--   1  duplicate: this key was already used for the same template and user;
--      slot and ordinal of the first claim, detail "P" (still pending) or "C",
--      and the attempt that reserved it: when it is the caller's own, this is
--      the caller's request run twice (a client that retried after a lost
--      reply), not another request's
--   2  sold_out            4  user_limit_reached     5  budget_exhausted
--      detail "H" when the user holds a coupon of the template: the refusal
--      may then be a replay whose key Redis lost, which only the database can
--      tell (no other refusal needs a database read); sold_out adds the
--      template's holders' generation: {2, 0, 0, 0, holds, gen} (gen "" when
--      the hash has none yet), which an instance keeps with its memory of the
--      sell-out (docs/soldout.md)
--   3  bad arguments (detail says which)
--   6  not_claimable: the rule refuses at now; {6, at, 0, remaining, holds,
--      why}: why is "paused", "archived", "campaign_paused", "not_yet" (at = opens),
--      "closed" (at = ends) or
--      "expired" (at = until); holds as for 2, 4 and 5
--   7  campaign_limit: the user holds the campaign cap's coupons across the
--      campaign's templates; detail as for 4
--   12 idempotency_mismatch: the key was used for another template or user
--   20 not loaded: the budget, template or rule key is missing, or the
--      template hash of another template of a capped campaign (Redis
--      restarted or flushed), or the rule unreadable; never read as zero or
--      as open: the caller loads the campaign and retries

local tid, user, rid = ARGV[1], ARGV[2], ARGV[3]
local now, ttl, attempt = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local anon = ARGV[7] == 'anon'
if ARGV[7] and ARGV[7] ~= '' and not anon then return {3, 0, 0, 0, 'mode'} end
if not tid or not string.match(tid, '^%d+$') then return {3, 0, 0, 0, 'template_id'} end
if anon then
  if user ~= '' then return {3, 0, 0, 0, 'user_id'} end
elseif not user or user == '' or string.find(user, '[|,=;]') then return {3, 0, 0, 0, 'user_id'} end
if not rid or rid == '' then return {3, 0, 0, 0, 'request_id'} end
if not now or not ttl or ttl <= 0 then return {3, 0, 0, 0, 'now_or_ttl'} end
if attempt == nil or attempt == '' then attempt = nil
elseif not string.match(attempt, '^%w+$') then return {3, 0, 0, 0, 'attempt'} end
local cap = 0
if ARGV[8] and ARGV[8] ~= '' then
  cap = tonumber(ARGV[8])
  if not cap or cap < 0 or (#KEYS - 7) % 2 ~= 0 then return {3, 0, 0, 0, 'cap'} end
end

-- 1. Idempotency: a key seen before answers with the first result.
local seen = redis.call('GET', KEYS[5])
if seen then
  -- seen = "<state>|tid|user|slot|ordinal|value|request_id[\n<attempt>]"
  local state, stid, suser, sslot, sord = string.match(seen, '^(%a)|(%d+)|([^|]*)|(%d+)|(%d+)|')
  if stid ~= tid or suser ~= user then return {12, 0, 0, 0, ''} end
  return {1, tonumber(sslot), tonumber(sord), 0, state, string.match(seen, '\n(%w+)$') or ''}
end

-- Loaded? Missing keys mean Redis lost them, not that the counters are zero.
local budget = redis.call('GET', KEYS[1])
local t = redis.call('HMGET', KEYS[2], 'remaining', 'next', 'total', 'limit', 'value', 'gen')
local rule = redis.call('GET', KEYS[7])
if not budget or not t[1] or not t[2] or not t[3] or not t[4] or not t[5] or not rule then
  return {20, 0, 0, 0, ''}
end
local status, opens, ends, vuntil = string.match(rule, '^(%a+)|(%-?%d+)|(%-?%d*)|(%-?%d*)$')
if not status then return {20, 0, 0, 0, ''} end
budget = tonumber(budget)
local remaining, nextslot, limit, value = tonumber(t[1]), tonumber(t[2]), tonumber(t[4]), tonumber(t[5])

local held = ''
if not anon then held = redis.call('HGET', KEYS[4], user) or '' end
local holds = ''
if held ~= '' then holds = 'H' end
-- 2. The claim rule, in the order of models.Template.ClaimRefusal.
local why, at
if status == 'archived' then why, at = 'archived', 0
elseif status == 'campaign' then why, at = 'campaign_paused', 0
elseif status ~= 'active' then why, at = 'paused', 0
elseif now < tonumber(opens) then why, at = 'not_yet', tonumber(opens)
elseif ends ~= '' and now >= tonumber(ends) then why, at = 'closed', tonumber(ends)
elseif vuntil ~= '' and now >= tonumber(vuntil) then why, at = 'expired', tonumber(vuntil)
end
if why then return {6, at, 0, remaining, holds, why} end
-- 3. Budget.
if budget >= 0 and budget < value then return {5, 0, 0, remaining, holds} end
-- 4. Stock.
if remaining <= 0 then return {2, 0, 0, 0, holds, t[6] or ''} end
-- 5. The user's limit: take the smallest ordinal in 1..limit they do not hold
-- (none for an anonymous claim: ordinal 0).
local have, count = {}, 0
for o in string.gmatch(held, '%d+') do
  have[tonumber(o)] = true
  count = count + 1
end
local ordinal = 0
if not anon then
  if count >= limit then return {4, 0, 0, remaining, holds} end
  ordinal = 1
  while have[ordinal] do ordinal = ordinal + 1 end
  -- 6. The campaign cap: the user's ordinals of every template of the
  -- campaign, this one's included.
  if cap > 0 then
    local total = count
    for k = 8, #KEYS, 2 do
      if redis.call('EXISTS', KEYS[k]) == 0 then return {20, 0, 0, 0, ''} end
      local other = redis.call('HGET', KEYS[k + 1], user) or ''
      for _ in string.gmatch(other, '%d+') do total = total + 1 end
    end
    if total >= cap then return {7, 0, 0, remaining, holds} end
  end
end

-- All checks passed: take budget, a slot and the ordinal, record the key.
local budgetleft = -1
if budget >= 0 then budgetleft = redis.call('DECRBY', KEYS[1], value) end
local slot = tonumber(redis.call('LPOP', KEYS[3]) or '')
if not slot then
  slot = nextslot
  redis.call('HINCRBY', KEYS[2], 'next', 1)
end
remaining = redis.call('HINCRBY', KEYS[2], 'remaining', -1)
-- One more user may hold a key of this template: a new holders' generation.
redis.call('HINCRBY', KEYS[2], 'gen', 1)
if not anon then
  if held == '' then held = tostring(ordinal) else held = held .. ',' .. ordinal end
  redis.call('HSET', KEYS[4], user, held)
end
local member = tid .. '|' .. user .. '|' .. slot .. '|' .. ordinal .. '|' .. value .. '|' .. rid
redis.call('SET', KEYS[5], 'P|' .. member .. (attempt and '\n' .. attempt or ''), 'EX', ttl)
redis.call('ZADD', KEYS[6], now, member)
return {0, slot, ordinal, remaining, '', budgetleft}
