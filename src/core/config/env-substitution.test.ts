import { describe, expect, it } from 'vitest';
import { substituteEnv } from './env-substitution.js';

const ENV: NodeJS.ProcessEnv = {
  A: 'alpha',
  A_B: 'alpha-beta',
  B: 'beta',
  KEY: 'sk_live_SECRET123',
  EMPTY: '',
  '1abc': 'digits-first',
  NESTED: '$B',
};

describe('substituteEnv', () => {
  it.each<[string, string, string]>([
    ['$A', 'alpha', '***'],
    ['${A}', 'alpha', '***'],
    ['https://h/?k=$KEY', 'https://h/?k=sk_live_SECRET123', 'https://h/?k=***'],
    ['https://h/v2/${KEY}/rpc', 'https://h/v2/sk_live_SECRET123/rpc', 'https://h/v2/***/rpc'],
    ['$A_B', 'alpha-beta', '***'],
    ['${A}_B', 'alpha_B', '***_B'],
    ['$A-B', 'alpha-B', '***-B'],
    ['$A.B', 'alpha.B', '***.B'],
    ['$A$B', 'alphabeta', '******'],
    ['${A}${B}', 'alphabeta', '******'],
    ['$1abc', 'digits-first', '***'],
    ['$$', '$$', '$$'],
    ['$$A', '$alpha', '$***'],
    ['price$', 'price$', 'price$'],
    ['$', '$', '$'],
    ['$-x', '$-x', '$-x'],
    ['$/path', '$/path', '$/path'],
    ['no variables', 'no variables', 'no variables'],
    ['', '', ''],
    ['$EMPTY', '', '***'],
    ['$NESTED', '$B', '***'],
  ])('turns %j into %j (masked %j)', (text, value, masked) => {
    const result = substituteEnv(text, ENV);
    expect(result).toEqual({ value, masked, missing: [], malformed: [] });
  });

  it('takes the maximal name run, so $A_B is not $A followed by _B', () => {
    const result = substituteEnv('$A_B', { A: 'alpha' });
    expect(result.missing).toEqual(['A_B']);
  });

  it('reports an unset variable by name instead of substituting an empty string', () => {
    const result = substituteEnv('https://h/?k=$MISSING_KEY', {});
    expect(result.missing).toEqual(['MISSING_KEY']);
    expect(result.masked).toBe('https://h/?k=***');
  });

  it('reports every unset variable, in order', () => {
    expect(substituteEnv('$X/${Y}/$A/$Z', ENV).missing).toEqual(['X', 'Y', 'Z']);
  });

  it('does not treat a set-but-empty variable as unset', () => {
    expect(substituteEnv('$EMPTY', ENV).missing).toEqual([]);
  });

  it.each<[string, string]>([
    ['${', '${'],
    ['${}', '${}'],
    ['${A-B}', '${A-B}'],
    ['${A B}', '${A B}'],
    ['https://h/${A', '${A'],
    ['https://h/${A?token=literal', '${A'],
    ['x${$A}', '${$A}'],
  ])('reports the malformed reference in %j as %j', (text, reference) => {
    const result = substituteEnv(text, ENV);
    expect(result.malformed).toEqual([reference]);
  });

  it('never puts a value in the masked string', () => {
    const result = substituteEnv('https://$A:$B@h/$KEY?k=${KEY}', ENV);
    for (const secret of ['alpha', 'beta', 'sk_live_SECRET123']) {
      expect(result.masked).not.toContain(secret);
    }
    expect(result.masked).toBe('https://***:***@h/***?k=***');
  });

  it('reads the env it is given, not process.env', () => {
    process.env.CASCADE_TEST_ONLY_IN_PROCESS = 'x';
    try {
      expect(substituteEnv('$CASCADE_TEST_ONLY_IN_PROCESS', {}).missing).toEqual([
        'CASCADE_TEST_ONLY_IN_PROCESS',
      ]);
    } finally {
      delete process.env.CASCADE_TEST_ONLY_IN_PROCESS;
    }
  });
});
