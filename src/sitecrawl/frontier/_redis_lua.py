"""The Redis frontier's Lua scripts: every multi-key update of a crawl, each atomic.

Keys and arguments are documented at each script; the key layout is in :mod:`._redis`. Every
script but :data:`CREATE` runs behind :func:`guard`: the frontier appends the crawl's
``config`` key to KEYS and its epoch to ARGV, and the guard takes them off again, so the
documented KEYS and ARGV are what the script body sees.
"""

#: The error code of a script run on a crawl whose epoch is gone (Redis restarted empty,
#: flushed, or the crawl started over): the first word of the error reply.
GONE = "SITECRAWL_GONE"


def guard(gone: str = "") -> str:
    """Lua: the crawl's identity, checked before anything is read or written: the epoch
    written when the crawl was created must still be there. ``gone``: Lua run when it is not
    (undoing what the script's caller wrote ahead of it), KEYS and ARGV as documented."""
    return f"""
local epoch = table.remove(ARGV)
local config = table.remove(KEYS)
if redis.call('HGET', config, 'epoch') ~= epoch then
{gone}  return redis.error_reply('{GONE} the crawl is not in this Redis')
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
# A lease is a member of ``leases`` prefixed with its worker's token ("token\nmember"),
# scored by its deadline: the worker that holds it is known without another key. Lua: the
# queue member of lease ``lm`` (a lease of an older sitecrawl, without the token, as it is).
_MEMBER = """
local function member_of(lm)
  local head, rest = string.match(lm, '^([^\\n]*)\\n(.*)$')
  if head and not string.match(head, '^%d+$') then return rest end
  return lm
end
"""

# KEYS: counts, queue, leases. ARGV: token, lease ms, max pages (0: none), how many to lease.
# Returns the members leased, in queue order and all of the lowest depth queued (none when
# none is queued): pages done and leased together never pass max pages, so the crawl stores
# exactly that many. Expired leases (a dead worker's) go back ahead of their depth first.
NEXT = f"""
{_NOW}
{_MEMBER}
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)
if #expired > 0 then
  local front = tonumber(redis.call('HGET', KEYS[1], 'front') or '0')
  local back = {{}}
  for _, lm in ipairs(expired) do
    local m = member_of(lm)
    front = front + 1
    back[#back + 1] = {_SCORE.format("- front")}
    back[#back + 1] = m
  end
  redis.call('ZADD', KEYS[2], unpack(back))
  redis.call('ZREM', KEYS[3], unpack(expired))
  redis.call('HSET', KEYS[1], 'front', front)
  redis.call('HINCRBY', KEYS[1], 'reclaimed', #expired)
end
local want = tonumber(ARGV[4])
local cap = tonumber(ARGV[3])
if cap > 0 then
  local done = tonumber(redis.call('HGET', KEYS[1], 'done') or '0')
  want = math.min(want, cap - done - redis.call('ZCARD', KEYS[3]))
  if want <= 0 then return {{}} end
end
local first = redis.call('ZRANGE', KEYS[2], 0, want - 1, 'WITHSCORES')
if #first == 0 then return {{}} end
local below = (math.floor(tonumber(first[2]) / 4294967296) + 1) * 4294967296
local leased = {{}}
local leases = {{}}
local deadline = now + tonumber(ARGV[2])
for i = 1, #first, 2 do
  if tonumber(first[i + 1]) >= below then break end
  leased[#leased + 1] = first[i]
  leases[#leases + 1] = deadline
  leases[#leases + 1] = ARGV[1] .. '\\n' .. first[i]
end
redis.call('ZREM', KEYS[2], unpack(leased))
redis.call('ZADD', KEYS[3], unpack(leases))
return leased
"""
# KEYS: counts, queue, leases, pages, records, then one seen bucket per link, every item's
# links in turn. ARGV: token, then per item (a lease ended): member, the name of its page's
# record in ``records`` (written by the HSET sent just before this call: records never go
# through Lua; "token:n", unique to the worker) or '' to release, 1 when the page is an error,
# how many links, then fingerprint, member per link. Each item in turn: its links are queued
# (as ADD), then its lease ends: the page is stored (its record's name appended to ``pages``)
# when this worker holds the lease, or when the lease expired and the request waits in the
# queue again (a page is stored once; a record not stored is deleted); a release, or a record
# that is not there (its HSET failed), puts the request back ahead of its depth. Returns, per
# item, how many of its links were queued.
DONE = f"""
local token = ARGV[1]
local c = redis.call('HMGET', KEYS[1], 'seq', 'front', 'seen', 'done', 'errors')
local seq, front = tonumber(c[1] or '0'), tonumber(c[2] or '0')
local seen, done, errors = tonumber(c[3] or '0'), tonumber(c[4] or '0'), tonumber(c[5] or '0')
local queued, pushed, out = {{}}, {{}}, {{}}
local moved = false
local i, k = 2, 6
while i <= #ARGV do
  local m, record, err, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  i = i + 4
  local added = 0
  for _ = 1, n do
    if redis.call('SADD', KEYS[k], ARGV[i]) == 1 then
      seq = seq + 1
      local m = ARGV[i + 1]
      queued[#queued + 1] = {_SCORE.format("+ seq")}
      queued[#queued + 1] = m
      added = added + 1
    end
    i, k = i + 2, k + 1
  end
  seen = seen + added
  out[#out + 1] = added
  local store, back = false, false
  if redis.call('ZREM', KEYS[3], token .. '\\n' .. m) == 1 then
    if record == '' then back = true else store = true end
  elseif record ~= '' and redis.call('ZREM', KEYS[2], m) == 1 then
    store = true
  end
  if store and redis.call('HEXISTS', KEYS[5], record) == 0 then
    store, back = false, true
  elseif record ~= '' and not store then
    redis.call('HDEL', KEYS[5], record)
  end
  if back then
    front = front + 1
    moved = true
    queued[#queued + 1] = {_SCORE.format("- front")}
    queued[#queued + 1] = m
  end
  if store then
    pushed[#pushed + 1] = record
    done = done + 1
    if err == '1' then errors = errors + 1 end
  end
end
if #queued > 0 then redis.call('ZADD', KEYS[2], unpack(queued)) end
if #pushed > 0 then redis.call('RPUSH', KEYS[4], unpack(pushed)) end
local fields = {{}}
if seen ~= tonumber(c[3] or '0') then
  fields[#fields + 1] = 'seq'
  fields[#fields + 1] = seq
  fields[#fields + 1] = 'seen'
  fields[#fields + 1] = seen
end
if moved then
  fields[#fields + 1] = 'front'
  fields[#fields + 1] = front
end
if #pushed > 0 then
  fields[#fields + 1] = 'done'
  fields[#fields + 1] = done
  fields[#fields + 1] = 'errors'
  fields[#fields + 1] = errors
end
if #fields > 0 then redis.call('HSET', KEYS[1], unpack(fields)) end
return out
"""
# When the crawl is gone, DONE deletes the records written for it (the HSET ahead of it is
# not guarded): nothing is left in a Redis restarted empty or a crawl started over.
DONE_GONE = """
local written = {}
local i = 2
while i <= #ARGV do
  if ARGV[i + 1] ~= '' then written[#written + 1] = ARGV[i + 1] end
  i = i + 4 + 2 * tonumber(ARGV[i + 3])
end
if #written > 0 then redis.call('HDEL', KEYS[5], unpack(written)) end
"""
# KEYS: leases, workers. ARGV: token, lease ms, members held. Renews the leases this worker
# still holds (not those reclaimed meanwhile) and its liveness.
HEARTBEAT = f"""
{_NOW}
local deadline = now + tonumber(ARGV[2])
local renew = {{}}
for i = 3, #ARGV do
  renew[#renew + 1] = deadline
  renew[#renew + 1] = ARGV[1] .. '\\n' .. ARGV[i]
end
if #renew > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(renew)) end
redis.call('ZADD', KEYS[2], deadline, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 86400000)
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
