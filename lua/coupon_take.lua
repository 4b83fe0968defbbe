-- coupon_take.lua: take up to n slots of a template's stock at once, for
-- bearer coupons made in bulk (docs/jobs.md): no user, no ordinal, no
-- idempotency key. The job that calls it writes the rows with these slots in
-- one transaction; if it dies before, the instance that resumes the job
-- rebuilds the campaign's counters from the database (coupon_load.lua), which
-- frees the slots again.
--
-- Slots given back (the free list) are taken first, then fresh ones from
-- next. The budget, when the campaign has one, pays value per slot.
--
-- KEYS (one campaign, sharing the hash tag {c<campaign_id>}):
--   1 budget   string: remaining budget in cents, -1 = the campaign has no budget
--   2 template hash: remaining, next, total (as in coupon_deduct.lua)
--   3 free     list of slots given back
-- ARGV: 1 n (slots wanted, >= 1)  2 value (budget cents per slot)
--
-- Returns {code, taken, remaining, why, first, last, free slots...}:
--   0  taken: taken slots (0..n), remaining after; fresh slots first..last
--      (none when last < first), then the slots taken from the free list;
--      when taken < n, why is "sold_out" or "budget_exhausted"
--   3  bad arguments
--   20 not loaded: the budget or template key is missing; the caller loads
--      the campaign and retries

local n, value = tonumber(ARGV[1]), tonumber(ARGV[2])
if not n or n < 1 or not value or value < 0 then return {3, 0, 0, 'args'} end
local budget = redis.call('GET', KEYS[1])
local t = redis.call('HMGET', KEYS[2], 'remaining', 'next', 'total')
if not budget or not t[1] or not t[2] or not t[3] then return {20, 0, 0, ''} end
budget = tonumber(budget)
local remaining, nextslot, total = tonumber(t[1]), tonumber(t[2]), tonumber(t[3])

local k, why = n, ''
if remaining < k then k, why = remaining, 'sold_out' end
if budget >= 0 and value > 0 and math.floor(budget / value) < k then
  k, why = math.floor(budget / value), 'budget_exhausted'
end
if k <= 0 then return {0, 0, remaining, why, 1, 0} end

local free = redis.call('LRANGE', KEYS[3], 0, k - 1)
if #free > 0 then redis.call('LTRIM', KEYS[3], #free, -1) end
local fresh = k - #free
if nextslot + fresh - 1 > total then
  -- Never hand out a slot above the stock, whatever remaining says.
  fresh = math.max(total - nextslot + 1, 0)
  k, why = #free + fresh, 'sold_out'
end
local first, last = nextslot, nextslot + fresh - 1
if fresh > 0 then redis.call('HSET', KEYS[2], 'next', last + 1) end
redis.call('HINCRBY', KEYS[2], 'remaining', -k)
if budget >= 0 and value > 0 then redis.call('INCRBY', KEYS[1], -k * value) end
local out = {0, k, remaining - k, why, first, last}
for i = 1, #free do out[#out + 1] = tonumber(free[i]) end
return out
