/**
 * The Lua scripts the fleet runs in Redis. Keys, per node and billing period (the period's
 * first day in the name):
 *
 *   <prefix>:usage:<node>:<period>  the fleet's credits (what `cascade quota show` reads)
 *   <prefix>:epoch:<node>:<period>  resets counted (`quota reset` bumps it)
 *   <prefix>:heal:<node>:<period>   "<life> <level>": the highest pre-loss total healed into
 *                                   usage in this Redis life (see SYNC_SCRIPT)
 *   <prefix>:reserve:<node>:<period>  hash, member → "<credits>,<incarnation>": credits each
 *                                   member holds ahead of spending (not in usage while it lives)
 *   <prefix>:life                   "<run_id> <ms>": this Redis life and when it began
 *   <prefix>:seq:<member>           the last batch number applied for a member
 *   <prefix>:members, <prefix>:demand:<node>  live members and their demand
 *   <prefix>:keys                   hash, client keys' runtime changes (keys/key-overrides.ts):
 *                                   field → "<version> <value>", and "~clock", a counter that
 *                                   moves at every write (see OVERRIDES_LUA)
 */

/** Usage keys expire well after their billing period (a month and a bit). */
export const USAGE_TTL_MS = 40 * 24 * 3600 * 1000;

/** Arguments per node in SYNC_SCRIPT, after the six leading ones. */
const SYNC_NODE_ARGS = 9;

/**
 * Client keys' runtime changes, in the sync (after the nodes' arguments: the counter the member
 * last saw, a count, then field, version, value per field). Versions are when each change was
 * made (keys/key-overrides.ts): a field is written when Redis holds no version of it as new, so
 * the newest change wins whichever member sends it first — a change made here, or one a member
 * writes back because Redis lost it or holds it older. The hash's "~clock" counts writes: it
 * moves (to Redis's time in ms, or one above its last value) whenever a field is written, so
 * it only grows, across Redis restarts too. The hash is read back only when something was sent
 * or the counter is not the one the member saw: most syncs read one field.
 */
const OVERRIDES_LUA = `
local overrides = false
local obase = 7 + count * ${SYNC_NODE_ARGS}
if ARGV[obase] ~= nil and ARGV[obase] ~= '-' then
  local okey = prefix .. ':keys'
  local seen, pushes = tonumber(ARGV[obase]), tonumber(ARGV[obase + 1])
  local stored = tonumber(redis.call('HGET', okey, '~clock') or '0')
  local clock = stored
  for i = 0, pushes - 1 do
    local at = obase + 2 + i * 3
    local field, version, value = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2]
    local held = redis.call('HGET', okey, field)
    local had = held and tonumber(string.match(held, '^(%d+) ')) or -1
    if had < version then
      redis.call('HSET', okey, field, string.format('%d ', version) .. value)
      clock = math.max(now, stored + 1)
    end
  end
  if clock ~= stored then redis.call('HSET', okey, '~clock', string.format('%d', clock)) end
  redis.call('PEXPIRE', okey, ${USAGE_TTL_MS})
  if pushes > 0 or clock ~= seen then overrides = redis.call('HGETALL', okey) end
end
`;

/**
 * One sync of one member. The healing rule, per node (issue 30):
 *
 * A Redis *life* is one redis-server process (its run_id): a restart — empty, or from an older
 * snapshot — begins a new one. Every member remembers the life its floor (the last total it
 * was acknowledged) came from. In a life, usage only grows, so a floor from this life is never
 * above it and heals nothing. A floor from an earlier life is a total Redis had before it lost
 * data; the highest such floor is what the fleet had booked by then, and usage must be that
 * plus every delta booked since. So usage is kept as `level + deltas`: `level` starts, at the
 * life's first sync, as what survived (0 when empty), and a higher earlier-life floor raises
 * usage by the difference — never sets it, which would drop the deltas other members sent
 * since the restart. A floor of unknown life (a member restored from quotas.json) heals only
 * when it is above usage (then Redis certainly lost it).
 *
 * An epoch lower in Redis than a member's means Redis lost resets it had counted: the epoch is
 * healed too (taken as the member's), and the total with it.
 *
 * Each member also sets its *reserve* (reservation-pace.ts): credits it may spend before its
 * next sync. While the member lives the reserve is not usage; once it is gone — its heartbeat
 * expired (and, after a restart of Redis, a whole lease has passed in this life for it to come
 * back), or it restarted under the same name (another incarnation) — its reserve is added to
 * usage: what it spent and never sent is then counted, rounded up to the reserve.
 */
export const SYNC_SCRIPT = `
local prefix, me, ttl, count, seq = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local incarnation = ARGV[6]
-- A batch is applied once: a resend after a lost reply carries the same number.
local seq_key = prefix .. ':seq:' .. me
local applied = tonumber(redis.call('GET', seq_key) or '0')
local fresh = seq > applied
if fresh then redis.call('SET', seq_key, seq, 'PX', ${USAGE_TTL_MS}) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local members_key = prefix .. ':members'
redis.call('HSET', members_key, me, now + ttl)
local all = redis.call('HGETALL', members_key)
local alive, expired, is_alive = {}, {}, {}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) >= now then
    alive[#alive + 1] = all[i]
    is_alive[all[i]] = true
  else
    expired[#expired + 1] = all[i]
  end
end
-- This Redis life: its run_id, new at every restart. Where INFO is not allowed (some managed
-- Redis), the life is a key of its own, new when Redis comes back empty (a restart from a
-- snapshot then goes unseen).
local info = redis.pcall('INFO', 'server')
local run_id = type(info) == 'string' and string.match(info, 'run_id:(%w+)') or nil
local life_key = prefix .. ':life'
local record_life, record_start = nil, nil
local life_record = redis.call('GET', life_key)
if life_record then record_life, record_start = string.match(life_record, '^(%w+) (%d+)$') end
local life = run_id or record_life or (t[1] .. 'x' .. t[2])
local life_start = nil
if record_life == life then life_start = tonumber(record_start) end
if life_start == nil then
  life_start = now
  redis.call('SET', life_key, life .. ' ' .. now)
end
if #expired > 0 then redis.call('HDEL', members_key, unpack(expired)) end
redis.call('PEXPIRE', members_key, ttl * 10)
local nodes = {}
for n = 0, count - 1 do
  local at = 7 + n * ${SYNC_NODE_ARGS}
  local name, period = ARGV[at], ARGV[at + 1]
  local delta, floor, floor_life = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), ARGV[at + 4]
  local epoch, reserve = tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6])
  local suffix = name .. ':' .. period
  local ukey, ekey, hkey = prefix .. ':usage:' .. suffix, prefix .. ':epoch:' .. suffix, prefix .. ':heal:' .. suffix
  local rkey = prefix .. ':reserve:' .. suffix
  local stored_epoch = tonumber(redis.call('GET', ekey) or '0')
  if epoch > stored_epoch then
    redis.call('SET', ekey, epoch, 'PX', ${USAGE_TTL_MS})
    stored_epoch = epoch
  end
  local used = tonumber(redis.call('GET', ukey) or '0')
  local level = used
  local heal = redis.call('GET', hkey)
  if heal then
    local heal_life, heal_level = string.match(heal, '^(%w+) (%d+)$')
    if heal_life == life then level = tonumber(heal_level) end
  end
  if epoch == stored_epoch and floor > level and floor_life ~= life and (floor_life ~= '-' or floor > used) then
    used = redis.call('INCRBY', ukey, floor - level)
    level = floor
  end
  redis.call('SET', hkey, life .. ' ' .. level, 'PX', ${USAGE_TTL_MS})
  if fresh and delta ~= 0 then used = redis.call('INCRBY', ukey, delta) end
  local held = redis.call('HGETALL', rkey)
  for i = 1, #held, 2 do
    local who = held[i]
    local amount, of = string.match(held[i + 1], '^(%d+),(%w+)$')
    local gone
    if who == me then gone = of ~= incarnation else gone = not is_alive[who] and now > life_start + ttl end
    if gone then
      used = redis.call('INCRBY', ukey, tonumber(amount))
      redis.call('HDEL', rkey, who)
    end
  end
  if reserve > 0 then
    redis.call('HSET', rkey, me, reserve .. ',' .. incarnation)
    redis.call('PEXPIRE', rkey, ${USAGE_TTL_MS})
  else
    redis.call('HDEL', rkey, me)
  end
  redis.call('PEXPIRE', ukey, ${USAGE_TTL_MS})
  local dkey = prefix .. ':demand:' .. name
  redis.call('HSET', dkey, me, ARGV[at + 7] .. ',' .. ARGV[at + 8])
  if #expired > 0 then redis.call('HDEL', dkey, unpack(expired)) end
  redis.call('PEXPIRE', dkey, ttl * 10)
  nodes[#nodes + 1] = { name, used, stored_epoch, redis.call('HGETALL', dkey) }
end
${OVERRIDES_LUA}
return cjson.encode({ alive, nodes, life, overrides, now })
`;

/** Zeroes usage in a new epoch; heal level and reserves go with it (a reset is not a loss). */
export const RESET_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
for n = 0, count - 1 do
  local suffix = ARGV[3 + n * 2] .. ':' .. ARGV[4 + n * 2]
  redis.call('DEL', prefix .. ':usage:' .. suffix, prefix .. ':heal:' .. suffix, prefix .. ':reserve:' .. suffix)
  redis.call('INCR', prefix .. ':epoch:' .. suffix)
  redis.call('PEXPIRE', prefix .. ':epoch:' .. suffix, ${USAGE_TTL_MS})
end
return count
`;

/** Usage per node, with the reserves of members no longer alive (they count once gone). */
export const READ_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local members = redis.call('HGETALL', prefix .. ':members')
local is_alive = {}
for i = 1, #members, 2 do
  if tonumber(members[i + 1]) >= now then is_alive[members[i]] = true end
end
local out = {}
for n = 0, count - 1 do
  local suffix = ARGV[3 + n * 2] .. ':' .. ARGV[4 + n * 2]
  local used = tonumber(redis.call('GET', prefix .. ':usage:' .. suffix) or '0')
  local held = redis.call('HGETALL', prefix .. ':reserve:' .. suffix)
  for i = 1, #held, 2 do
    if not is_alive[held[i]] then used = used + tonumber(string.match(held[i + 1], '^(%d+)')) end
  end
  out[#out + 1] = used
end
return out
`;
