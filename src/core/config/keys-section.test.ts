/** loadConfig: `[[keys]]`, `keys_file` and `[server] require_key` (issue 27). */
import { describe, expect, it } from 'vitest';
import { balancerToml } from '../../../test/support/config-files.js';
import { onlyAt, paths, useConfigDir } from '../../../test/support/config-loading.js';
import type { TomlFields } from '../../../test/support/toml.js';
import { loadConfig } from './load-config.js';
import { keyHash } from './keys-section.js';

const { load, temp } = useConfigDir();
const KEY = 'ck_test_0123456789abcdefghij';
const HASH = keyHash(KEY);
const base = (server: TomlFields = {}): string => balancerToml({ server });

describe('loadConfig: [[keys]]', () => {
  it('reads every field of a key, defaults applied', () => {
    const result = load(
      `${base()}
[[keys]]
name = "web"
key_sha256 = "${HASH}"
methods = ["get*", "!getProgramAccounts"]
rps_limit = 10
max_concurrent = 4
monthly_credits = 5000
reset_day = 15
origins = ["https://app.example"]
per_ip_rps = 2
max_batch_size = 5
max_subscriptions = 3
params = { getProgramAccounts = ["Prog1111"] }

[[keys]]
name = "backend"
key_env = "BACKEND_KEY"
`,
      { env: { BACKEND_KEY: KEY + 'x' } },
    );
    expect(result.errors).toEqual([]);
    expect(result.config?.keys?.keys).toEqual([
      {
        name: 'web',
        sha256: HASH,
        allow: ['get*'],
        deny: ['getProgramAccounts'],
        rpsLimit: 10,
        maxConcurrent: 4,
        monthlyCredits: 5000,
        resetDay: 15,
        origins: ['https://app.example'],
        perIpRps: 2,
        maxBatchSize: 5,
        maxSubscriptions: 3,
        params: { getProgramAccounts: ['Prog1111'] },
        chains: [],
      },
      expect.objectContaining({
        name: 'backend',
        sha256: keyHash(KEY + 'x'),
        allow: [],
        resetDay: 1,
      }),
    ]);
  });

  it('has no keys section when the config names none: cascade stays open', () => {
    expect(load(base()).config?.keys).toBeUndefined();
  });

  it.each<[string, string, string, string]>([
    ['no secret', 'name = "a"', 'keys[0].key_sha256', 'is required (or key_env)'],
    [
      'a key in clear',
      'name = "a"\nkey = "abc"',
      'keys[0].key',
      'a key is never written in a config file',
    ],
    [
      'both secrets',
      `name = "a"\nkey_sha256 = "${HASH}"\nkey_env = "K"`,
      'keys[0].key_sha256',
      'not both',
    ],
    ['a short hash', 'name = "a"\nkey_sha256 = "abc"', 'keys[0].key_sha256', '64 lower-case hex'],
    ['an unset variable', 'name = "a"\nkey_env = "NOPE"', 'keys[0].key_env', 'NOPE is not set'],
    ['a short key', 'name = "a"\nkey_env = "SHORT"', 'keys[0].key_env', 'at least 16 characters'],
    ['no name', `key_sha256 = "${HASH}"`, 'keys[0].name', 'is required'],
    [
      'a bad name',
      `name = "a b"\nkey_sha256 = "${HASH}"`,
      'keys[0].name',
      "'a b' is not a key name",
    ],
    [
      'a bad glob',
      `name = "a"\nkey_sha256 = "${HASH}"\nmethods = ["get Balance"]`,
      'keys[0].methods',
      'not a method glob',
    ],
    [
      'an unknown field',
      `name = "a"\nkey_sha256 = "${HASH}"\nrps = 3`,
      'keys[0].rps',
      'unknown key',
    ],
    [
      'a zero rps',
      `name = "a"\nkey_sha256 = "${HASH}"\nrps_limit = 0`,
      'keys[0].rps_limit',
      'between 1',
    ],
    [
      'a bad origin',
      `name = "a"\nkey_sha256 = "${HASH}"\norigins = ["app.example"]`,
      'keys[0].origins[0]',
      'is not an origin',
    ],
  ])('names the field for %s', (_case, fields, at, message) => {
    const result = load(`${base()}\n[[keys]]\n${fields}\n`, { env: { SHORT: 'abc' } });
    expect(onlyAt(result.errors, at).message).toContain(message);
    expect(JSON.stringify(result.errors)).not.toContain(KEY);
  });

  it('refuses two keys with one name or one secret', () => {
    const entry = (name: string) => `[[keys]]\nname = "${name}"\nkey_sha256 = "${HASH}"\n`;
    const result = load(`${base()}\n${entry('a')}${entry('a')}`);
    const messages = result.errors.map((e) => e.message);
    expect(messages).toContain("two keys share the name 'a'");
    expect(messages).toContain("keys 'a' and 'a' have the same secret");
  });

  it('reads keys_file beside the config, and reports its problems in that file', () => {
    temp.write({ 'keys.toml': `[[keys]]\nname = "f"\nkey_sha256 = "${HASH}"\n` });
    const result = load(`keys_file = "keys.toml"\n${base()}`);
    expect(result.errors).toEqual([]);
    expect(result.config?.keys?.keys.map((k) => k.name)).toEqual(['f']);
    expect(result.config?.keys?.file).toBe(temp.path('keys.toml'));
    temp.write({ 'keys.toml': `[[keys]]\nname = "f"\n` });
    const broken = load(`keys_file = "keys.toml"\n${base()}`);
    expect(broken.errors[0]).toMatchObject({
      file: temp.path('keys.toml'),
      path: 'keys[0].key_sha256',
    });
    const missing = load(`keys_file = "nope.toml"\n${base()}`);
    expect(missing.errors[0]?.message).toBe('keys file not found');
  });
});

describe('loadConfig: keys written in ways that would not do what they say', () => {
  it('refuses an empty methods list, which would read as nothing yet allow everything', () => {
    const result = load(`${base()}\n[[keys]]\nname = "a"\nkey_sha256 = "${HASH}"\nmethods = []\n`);
    expect(onlyAt(result.errors, 'keys[0].methods').message).toContain('is empty');
  });

  it('names the element of a list that is not a string, and the field in the hint', () => {
    const listed = load(
      `${base()}\n[[keys]]\nname = "a"\nkey_sha256 = "${HASH}"\nmethods = ["get*", 5]\n`,
    );
    expect(onlyAt(listed.errors, 'keys[0].methods[1]').message).toBe(
      'must be a string, got number 5',
    );
    const origins = load(
      `${base()}\n[[keys]]\nname = "a"\nkey_sha256 = "${HASH}"\norigins = "https://app.example"\n`,
    );
    expect(onlyAt(origins.errors, 'keys[0].origins').hint).toContain('e.g. origins = [');
  });

  it("warns of a key's max_batch_size the server's limit makes moot", () => {
    const result = load(
      `${base({ max_batch_size: 50 })}\n[[keys]]\nname = "a"\nkey_sha256 = "${HASH}"\nmax_batch_size = 80\n`,
    );
    expect(result.errors).toEqual([]);
    expect(onlyAt(result.warnings, 'keys').message).toContain(
      "key 'a' has max_batch_size = 80, above [server] max_batch_size = 50",
    );
  });
});

describe('loadConfig: what problems across keys name', () => {
  it('names the keys file and the entry for a name used twice there', () => {
    temp.write({
      'keys.toml': `[[keys]]\nname = "f"\nkey_sha256 = "${HASH}"\n\n[[keys]]\nname = "f"\nkey_sha256 = "${keyHash(KEY + 'x')}"\n`,
    });
    const result = load(`keys_file = "keys.toml"\n${base()}`);
    expect(result.errors).toEqual([
      expect.objectContaining({
        file: temp.path('keys.toml'),
        path: 'keys[1].name',
        message: "two keys share the name 'f'",
      }),
    ]);
  });

  it('says only what is wrong when require_key has keys whose secrets are missing', () => {
    const text = `${base({ require_key: true })}\n[[keys]]\nname = "a"\nkey_env = "A_KEY"\n[[keys]]\nname = "b"\nkey_env = "B_KEY"\n`;
    const result = load(text);
    expect(paths(result.errors)).toEqual(['keys[0].key_env', 'keys[1].key_env']);
  });

  it('loads keys whose key_env is unset for operator commands, which only name them', () => {
    load(
      `${base({ require_key: true })}\n[[keys]]\nname = "a"\nkey_env = "A_KEY"\n[[keys]]\nname = "b"\nkey_env = "B_KEY"\nmonthly_credits = 9\n`,
    );
    const result = loadConfig({
      cwd: temp.dir,
      configPath: 'config.toml',
      env: {},
      keySecretsOptional: true,
    });
    expect(result.errors).toEqual([]);
    expect(result.config?.keys?.keys.map((key) => [key.name, key.monthlyCredits])).toEqual([
      ['a', undefined],
      ['b', 9],
    ]);
  });
});

describe('loadConfig: key_env keys a client cannot pass everywhere', () => {
  it.each([
    ['a path-safe key', 'ck_0123456789abcdef-_.~', undefined],
    ['a + and /', 'my.team.key+v1/2026-x', 'cannot be passed in the URL path'],
    ['over 256 characters', 'F'.repeat(300), 'cannot be passed in the URL path'],
    ['non-ASCII', 'schlüssel-ünïcode-123', 'only percent-encoded in ?api-key='],
  ])('%s', (_what, key, warning) => {
    const result = load(`${base()}\n[[keys]]\nname = "k"\nkey_env = "K"\n`, { env: { K: key } });
    expect(result.errors).toEqual([]);
    if (warning === undefined) expect(result.warnings).toEqual([]);
    else {
      const problem = onlyAt(result.warnings, 'keys[0].key_env');
      expect(problem.message).toContain(warning);
      expect(problem.hint).toContain('cascade key new');
    }
  });
});

describe('loadConfig: require_key and an exposed listener', () => {
  it('refuses require_key with no keys at all', () => {
    const result = load(base({ require_key: true }));
    expect(onlyAt(result.errors, 'server.require_key').message).toContain('no [[keys]]');
  });

  it('warns when a listener other machines reach takes keyless calls', () => {
    const open = load(base({ host: '0.0.0.0' }));
    expect(onlyAt(open.warnings, 'server.host').message).toContain('without a client key');
    const keyed = load(
      `${base({ host: '0.0.0.0', require_key: true })}\n[[keys]]\nname = "a"\nkey_sha256 = "${HASH}"\n`,
    );
    expect(keyed.errors).toEqual([]);
    expect(keyed.warnings).toEqual([]);
    expect(load(base()).warnings).toEqual([]);
  });
});
