import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may point (docs/webhooks.md, "Targets"): http(s) only, and never an address in
 * a private, loopback, link-local or otherwise non-public range, unless the node runs with
 * KEYWARD_WEBHOOK_ALLOW_PRIVATE=1. Checked when a webhook is created (a name that resolves to
 * such an address is refused) and again on every connection (the resolved address is checked
 * before the socket connects, so a name that changes its answer later is refused then).
 */

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['100::', 64], // discard
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (`::ffff:a.b.c.d`, NAT64, 6to4), if it carries one. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/.exec(lower);
  if (sixToFour) {
    const high = parseInt(sixToFour[1]!, 16);
    const low = parseInt(sixToFour[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

/** Whether an IP address (v4 or v6, with or without an embedded v4) is outside the public ranges. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(bare, 'ipv6');
  }
  return true; // not an address at all: never connect to it
}

export class TargetRefusedError extends Error {}

/** The URL's problem in a few words, or undefined when its form is acceptable. */
export function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be http or https';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (url.hash !== '') return 'must not have a fragment';
  return undefined;
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|local|internal)\.?$/i;

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
}

/**
 * Why the URL's host may not be a webhook's target, or undefined. A name that does not resolve
 * now is let through: the connection checks whatever it resolves to later.
 */
export async function targetProblem(
  text: string,
  allowPrivate: boolean,
  resolveMs = 2_000,
): Promise<string | undefined> {
  const form = urlProblem(text);
  if (form) return form;
  if (allowPrivate) return undefined;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  const refused = 'points to a private, loopback or link-local address';
  if (isIP(host) !== 0) return isPrivateAddress(host) ? refused : undefined;
  if (LOCAL_NAMES.test(host)) return refused;
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolveAll(host).catch(() => [] as LookupAddress[]),
    new Promise<LookupAddress[]>((resolve) => {
      timer = setTimeout(() => resolve([]), resolveMs);
    }),
  ]);
  clearTimeout(timer);
  return addresses.some((entry) => isPrivateAddress(entry.address)) ? refused : undefined;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that refuses a private address: the check and the connection use
 * the same answer, so a name cannot pass the check and then connect elsewhere.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const allowed = allowPrivate
        ? addresses
        : addresses.filter((entry) => !isPrivateAddress(entry.address));
      if (allowed.length === 0) {
        const refused: NodeJS.ErrnoException = new TargetRefusedError(
          `${hostname} resolves only to private, loopback or link-local addresses`,
        );
        refused.code = 'EKEYWARDREFUSED';
        return callback(refused, []);
      }
      if (options.all) return callback(null, allowed);
      const first = allowed[0]!;
      return callback(null, first.address, first.family);
    });
  };
}
