-- coupon_stock.lua: add stock to a template's counters after the database
-- committed the new total_stock.
--
-- KEYS: 1 template hash
-- ARGV: 1 delta (> 0)  2 the new total_stock per the database
--
-- Returns 1 when added; 0 when the counters are not loaded (the loader will
-- read the new total from the database); 2 when the hash already shows that
-- total (a retry, or a reload that ran after the commit).

if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local total = tonumber(redis.call('HGET', KEYS[1], 'total'))
if total >= tonumber(ARGV[2]) then return 2 end
redis.call('HINCRBY', KEYS[1], 'total', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'remaining', ARGV[1])
return 1
