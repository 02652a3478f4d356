import { createHmac } from 'node:crypto';
import { retryDelay } from '../../src/webhooks/dispatcher';
import { signatureHeader, verifySignature } from '../../src/webhooks/signature';
import { isPrivateAddress, targetProblem, urlProblem } from '../../src/webhooks/targets';

/** The SSRF rule of webhook targets, the signature a receiver checks, and the retry schedule. */

describe('private addresses', () => {
  test.each([
    '0.0.0.0',
    '10.0.0.1',
    '100.64.1.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '::ffff:0:10.0.0.1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '::127.0.0.1',
    'not an address',
  ])('%s is refused', (address) => expect(isPrivateAddress(address)).toBe(true));

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '203.0.113.10',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => expect(isPrivateAddress(address)).toBe(false));
});

describe('target URLs', () => {
  test.each([
    ['ftp://example.com/x', 'must be http or https'],
    ['https://user:pw@example.com/', 'must not hold credentials'],
    ['https://example.com/#x', 'must not have a fragment'],
    ['example.com/x', 'must be an absolute http or https URL'],
  ])('%s: %s', (url, problem) => expect(urlProblem(url)).toBe(problem));

  test('literals and local names are judged without a lookup; the flag lifts the rule', async () => {
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://[::ffff:10.0.0.1]/',
      'http://db.internal/',
    ]) {
      expect(await targetProblem(url, false)).toMatch(/private/);
      expect(await targetProblem(url, true)).toBeUndefined();
    }
    expect(await targetProblem('https://203.0.113.10/hook', false)).toBeUndefined();
  });
});

describe('signatures', () => {
  const secret = 'whsec_test';
  const body = '{"id":"evt_1"}';

  test('a header signs "<t>.<body>" with the secret as a string', () => {
    const header = signatureHeader(secret, body, 1_700_000_000);
    expect(header).toBe(
      `t=1700000000,v1=${createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex')}`,
    );
    expect(verifySignature(secret, body, header, 1_700_000_100)).toBe(true);
  });

  test('another secret, body or an old timestamp does not verify', () => {
    const header = signatureHeader(secret, body, 1_700_000_000);
    expect(verifySignature('whsec_other', body, header, 1_700_000_000)).toBe(false);
    expect(verifySignature(secret, `${body} `, header, 1_700_000_000)).toBe(false);
    expect(verifySignature(secret, body, header, 1_700_001_000)).toBe(false);
    expect(verifySignature(secret, body, 'garbage', 1_700_000_000)).toBe(false);
  });
});

test('retries double from the base, up to an hour', () => {
  expect([1, 2, 3, 4].map((n) => retryDelay(10_000, n))).toEqual([10_000, 20_000, 40_000, 80_000]);
  expect(retryDelay(10_000, 30)).toBe(3_600_000);
});
