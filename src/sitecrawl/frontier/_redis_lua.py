"""The Redis frontier's Lua scripts: every multi-key update of a crawl, each atomic.

Keys and arguments are documented at each script; the key layout is in :mod:`._redis`. Every
script but :data:`CREATE` runs behind :data:`GUARD`: the frontier appends the crawl's
``config`` key to KEYS and its epoch to ARGV, and the guard takes them off again, so the
documented KEYS and ARGV are what the script body sees.
"""

#: The error code of a script run on a crawl whose epoch is gone (Redis restarted empty,
#: flushed, or the crawl started over): the first word of the error reply.
GONE = "SITECRAWL_GONE"

# The crawl's identity, checked before anything is read or written: the epoch written when
# the crawl was created must still be there.
GUARD = f"""
local epoch = table.remove(ARGV)
local config = table.remove(KEYS)
if redis.call('HGET', config, 'epoch') ~= epoch then
  return redis.error_reply('{GONE} the crawl is not in this Redis')
end
"""

# A member is "depth\nkey\nurl"; its queue score is depth * 2**32 + 2**31 +/- a counter.
_SCORE = "string.format('%.0f', tonumber(string.match(m, '^(%d+)')) * 4294967296 + 2147483648 {})"
_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)"

# KEYS: config. ARGV: field, value, ... (epoch included). Creates the crawl unless it
# exists: returns 1 when created.
CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""


def _adds(first: int, argv: int) -> str:
    """Lua: queue each request whose fingerprint is new to its seen bucket, counted in
    ``added``. The buckets are KEYS[first] on; the fingerprint and member of the request of
    KEYS[first + n] are ARGV[argv + 2n] and ARGV[argv + 2n + 1]. KEYS[1] and KEYS[2] are the
    counts and the queue."""
    return f"""
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local added = 0
for i = {first}, #KEYS do
  local fp = ARGV[{argv} + 2 * (i - {first})]
  local m = ARGV[{argv} + 2 * (i - {first}) + 1]
  if redis.call('SADD', KEYS[i], fp) == 1 then
    seq = seq + 1
    redis.call('ZADD', KEYS[2], {_SCORE.format("+ seq")}, m)
    added = added + 1
  end
end
if added > 0 then
  redis.call('HSET', KEYS[1], 'seq', seq)
  redis.call('HINCRBY', KEYS[1], 'seen', added)
end
"""


# KEYS: counts, queue, one seen bucket per request. ARGV: fingerprint, member per request.
ADD = _adds(3, 1) + "return added\n"
# KEYS: counts, bucket. ARGV: fingerprint.
CLAIM = """
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'seen', 1)
  return 1
end
return 0
"""
# KEYS: counts, queue, leases, owners. ARGV: token, lease ms, max pages (0: none), how many
# to lease. Returns the members leased, in queue order and all of the lowest depth queued
# (none when none is queued): pages done and leased together never pass max pages, so the
# crawl stores exactly that many.
NEXT = f"""
{_NOW}
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)
for _, m in ipairs(expired) do
  local front = redis.call('HINCRBY', KEYS[1], 'front', 1)
  redis.call('ZADD', KEYS[2], {_SCORE.format("- front")}, m)
  redis.call('ZREM', KEYS[3], m)
  redis.call('HDEL', KEYS[4], m)
  redis.call('HINCRBY', KEYS[1], 'reclaimed', 1)
end
local want = tonumber(ARGV[4])
local cap = tonumber(ARGV[3])
if cap > 0 then
  local done = tonumber(redis.call('HGET', KEYS[1], 'done') or '0')
  want = math.min(want, cap - done - redis.call('ZCARD', KEYS[3]))
  if want <= 0 then return {{}} end
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #first == 0 then return {{}} end
local below = (math.floor(tonumber(first[2]) / 4294967296) + 1) * 4294967296
local leased = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('(%.0f', below),
  'LIMIT', 0, want)
redis.call('ZREM', KEYS[2], unpack(leased))
local deadline = now + tonumber(ARGV[2])
for _, m in ipairs(leased) do
  redis.call('ZADD', KEYS[3], deadline, m)
  redis.call('HSET', KEYS[4], m, ARGV[1])
end
return leased
"""
# KEYS: counts, queue, leases, owners, pages, then one seen bucket per link. ARGV: member,
# token, page JSON ('' to release), 1 when the page is an error, then fingerprint, member per
# link. The page's links are queued (as ADD) in the same step that records it. Returns how
# many links were queued.
MARK_DONE = f"""
{_adds(6, 5)}
local m = ARGV[1]
if redis.call('HGET', KEYS[4], m) == ARGV[2] then
  redis.call('ZREM', KEYS[3], m)
  redis.call('HDEL', KEYS[4], m)
  if ARGV[3] == '' then
    local front = redis.call('HINCRBY', KEYS[1], 'front', 1)
    redis.call('ZADD', KEYS[2], {_SCORE.format("- front")}, m)
    return added
  end
elseif ARGV[3] == '' or redis.call('ZREM', KEYS[2], m) == 0 then
  return added
end
redis.call('RPUSH', KEYS[5], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'done', 1)
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[1], 'errors', 1) end
return added
"""
# KEYS: leases, owners, workers. ARGV: token, lease ms, members held.
HEARTBEAT = f"""
{_NOW}
local deadline = now + tonumber(ARGV[2])
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i])
  end
end
redis.call('ZADD', KEYS[3], deadline, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 86400000)
return now
"""
# KEYS: counts, queue, leases, workers. ARGV: none. Returns {seen, done, errors, reclaimed,
# queued, leased, workers alive}.
STATUS = f"""
{_NOW}
local counts = redis.call('HMGET', KEYS[1], 'seen', 'done', 'errors', 'reclaimed')
local out = {{}}
for i = 1, 4 do out[i] = tonumber(counts[i] or '0') end
out[5] = redis.call('ZCARD', KEYS[2])
out[6] = redis.call('ZCARD', KEYS[3])
out[7] = redis.call('ZCOUNT', KEYS[4], now, '+inf')
return out
"""
# KEYS: pages. ARGV: first, last index. The stored page records in that range.
PAGES = """
return redis.call('LRANGE', KEYS[1], ARGV[1], ARGV[2])
"""
