/**
 * The Lua scripts the fleet runs in Redis. Keys, per node and billing period (the period's
 * first day in the name):
 *
 *   <prefix>:usage:<node>:<period>  the fleet's credits (what `cascade quota show` reads)
 *   <prefix>:epoch:<node>:<period>  resets counted (`quota reset` bumps it)
 *   <prefix>:heal:<node>:<period>   "<life> <level>": the highest pre-loss total healed into
 *                                   usage in this Redis life (see SYNC_SCRIPT)
 *   <prefix>:seq:<member>           the last batch number applied for a member
 *   <prefix>:members, <prefix>:demand:<node>  live members and their demand
 */

/** Usage keys expire well after their billing period (a month and a bit). */
export const USAGE_TTL_MS = 40 * 24 * 3600 * 1000;

/** Arguments per node in SYNC_SCRIPT, after the five leading ones. */
const SYNC_NODE_ARGS = 8;

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
 */
export const SYNC_SCRIPT = `
local prefix, me, ttl, count, seq = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local life = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
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
local alive, expired = {}, {}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) >= now then alive[#alive + 1] = all[i] else expired[#expired + 1] = all[i] end
end
if #expired > 0 then redis.call('HDEL', members_key, unpack(expired)) end
redis.call('PEXPIRE', members_key, ttl * 10)
local nodes = {}
for n = 0, count - 1 do
  local at = 6 + n * ${SYNC_NODE_ARGS}
  local name, period = ARGV[at], ARGV[at + 1]
  local delta, floor, floor_life = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), ARGV[at + 4]
  local epoch = tonumber(ARGV[at + 5])
  local suffix = name .. ':' .. period
  local ukey, ekey, hkey = prefix .. ':usage:' .. suffix, prefix .. ':epoch:' .. suffix, prefix .. ':heal:' .. suffix
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
  redis.call('PEXPIRE', ukey, ${USAGE_TTL_MS})
  local dkey = prefix .. ':demand:' .. name
  redis.call('HSET', dkey, me, ARGV[at + 6] .. ',' .. ARGV[at + 7])
  if #expired > 0 then redis.call('HDEL', dkey, unpack(expired)) end
  redis.call('PEXPIRE', dkey, ttl * 10)
  nodes[#nodes + 1] = { name, used, stored_epoch, redis.call('HGETALL', dkey) }
end
return cjson.encode({ alive, nodes, life })
`;

/** Zeroes usage in a new epoch; the heal level goes with it (a reset is not a loss). */
export const RESET_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
for n = 0, count - 1 do
  local suffix = ARGV[3 + n * 2] .. ':' .. ARGV[4 + n * 2]
  redis.call('DEL', prefix .. ':usage:' .. suffix, prefix .. ':heal:' .. suffix)
  redis.call('INCR', prefix .. ':epoch:' .. suffix)
  redis.call('PEXPIRE', prefix .. ':epoch:' .. suffix, ${USAGE_TTL_MS})
end
return count
`;

export const READ_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
local out = {}
for n = 0, count - 1 do
  local name, period = ARGV[3 + n * 2], ARGV[4 + n * 2]
  out[#out + 1] = tonumber(redis.call('GET', prefix .. ':usage:' .. name .. ':' .. period) or '0')
end
return out
`;
