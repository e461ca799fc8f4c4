"""The Lua scripts of the Redis class store: each runs whole inside Redis, so its checks and its
write cannot be raced by another replica (redis_store.py says what each key holds).
"""

from __future__ import annotations

LOST = -9
# Every write script starts with this: refuse (LOST) unless the store is the one this server
# wrote to; count the write. KEYS[1] is STORE, ARGV[1] the token, ARGV[2] the count last seen.
GUARD = """
local token = redis.call('HGET', KEYS[1], 'token')
local count = tonumber(redis.call('HGET', KEYS[1], 'writes') or '0')
if token ~= ARGV[1] or count < tonumber(ARGV[2]) then return {-9, count} end
local function wrote() return redis.call('HINCRBY', KEYS[1], 'writes', 1) end
"""
INSERT = (
    GUARD
    + """
if redis.call('HSETNX', KEYS[2], 'teacher', ARGV[3]) == 0 then return {0, count} end
redis.call('HSET', KEYS[2], 'state', ARGV[4], 'version', 0, 'created', ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[6])
return {1, wrote()}
"""
)
UPDATE = (
    GUARD
    + """
if redis.call('EXISTS', KEYS[2]) == 0 then return {-1, count} end
local version = redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HSET', KEYS[2], 'state', ARGV[3])
for i = 2, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
return {version, wrote()}
"""
)
# KEYS: store, class, students, names, clients, seen; ARGV: token, count, id, member JSON,
# nickname, size, per address, per browser, limited, address, browser, now, keep
JOIN = (
    GUARD
    + """
if redis.call('HEXISTS', KEYS[3], ARGV[3]) == 1 then return {2, count} end
local joined = redis.call('HLEN', KEYS[3])
local fa, fb = 0, 0
if ARGV[9] == '1' then
  fa = tonumber(redis.call('HGET', KEYS[5], 'a:' .. ARGV[10]) or '0')
  fb = tonumber(redis.call('HGET', KEYS[5], 'b:' .. ARGV[11]) or '0')
end
if joined >= tonumber(ARGV[6]) or fb >= tonumber(ARGV[8]) or fa >= tonumber(ARGV[7]) then
  return {-1, count, joined, fa, fb}
end
if redis.call('SADD', KEYS[4], ARGV[5]) == 0 then return {-2, count} end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HINCRBY', KEYS[5], 'a:' .. ARGV[10], 1)
redis.call('HINCRBY', KEYS[5], 'b:' .. ARGV[11], 1)
redis.call('ZADD', KEYS[6], ARGV[12], ARGV[3])
for i = 3, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[13]) end
return {1, wrote()}
"""
)
# KEYS: store, students, clients, seen, removed, answers of each question; ARGV: token, count, id
REMOVE = (
    GUARD
    + """
local member = redis.call('HGET', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[5], ARGV[3])
for i = 6, #KEYS do redis.call('HDEL', KEYS[i], ARGV[3]) end
if not member then return {0, wrote()} end
local m = cjson.decode(member)
redis.call('HINCRBY', KEYS[3], 'a:' .. (m.address or ''), -1)
redis.call('HINCRBY', KEYS[3], 'b:' .. (m.browser or ''), -1)
redis.call('HDEL', KEYS[2], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
return {1, wrote()}
"""
)
# KEYS: store, class, students, answers, questions; ARGV: token, count, question, student,
# choice, keep
ANSWER = (
    GUARD
    + """
local state = redis.call('HGET', KEYS[2], 'state')
if not state or redis.call('HEXISTS', KEYS[3], ARGV[4]) == 0 then return {0, count} end
local s = cjson.decode(state)
local options = 0
if type(s.question) == 'table' then options = #s.question.options end
local choice = tonumber(ARGV[5])
if s.question_id ~= ARGV[3] or s.revealed == ARGV[3] or choice < 0 or choice >= options then
  return {0, count}
end
redis.call('HSET', KEYS[4], ARGV[4], ARGV[5])
redis.call('SADD', KEYS[5], ARGV[3])
redis.call('EXPIRE', KEYS[4], ARGV[6])
redis.call('EXPIRE', KEYS[5], ARGV[6])
return {1, wrote()}
"""
)
# KEYS: the class's one-time code (a hash: digest, expires, wrong, used); ARGV: the digest
# tried, now, wrong tries that void the code. 1: it was the code (now used up), 0: it was not.
CLAIM = """
local open = redis.call('HMGET', KEYS[1], 'digest', 'expires')
if not open[1] or open[1] == '' then return 0 end
if open[1] == ARGV[1] and tonumber(ARGV[2]) <= tonumber(open[2]) then
  redis.call('HSET', KEYS[1], 'digest', '', 'used', ARGV[2])
  return 1
end
if redis.call('HINCRBY', KEYS[1], 'wrong', 1) >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'digest', '')
end
return 0
"""
