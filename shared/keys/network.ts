import { isIPv4, isIPv6 } from 'node:net';

/**
 * Networks an app may call from: its `allowedCidrs` (IPv4 and IPv6). Addresses are validated by node:net; the
 * arithmetic here is on their bytes: a CIDR's host bits must be zero, and a source is in a block when its first
 * `prefix` bits are the block's. node:net's BlockList did the check until it met scale: each one is a native object
 * (two per app, one per family, and an address object per check) whose memory V8 does not see, so nothing prompts a
 * collection while they pile up, and freed they leave the heap fragmented. Built for 100,000 apps within a TTL they
 * held 144 MB more RSS after a full collection than the same apps without allowlists (npm run bench -- --only
 * lambda-bounds). BlockList stays the reference the check is tested against (network.property.test.ts).
 */

export type IpFamily = 'ipv4' | 'ipv6';

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: IpFamily;
}

export type CidrReading =
  { readonly ok: true; readonly cidr: Cidr } | { readonly ok: false; readonly reason: string };

/** One group of an IPv6 address: one to four hex digits. */
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * The 16 bytes of an IPv6 address (`::` expanded, an IPv4 tail included), or undefined for anything this reader
 * cannot read whole. node:net accepts a zone id (`fe80::1%eth0`, `::ffff:198.51.100.77%eth0`), which names a link
 * on the host and has no place in a caller's address or an allowlist: every part must be a hex group or a dotted
 * IPv4 tail, so a zone id, or anything else unexpected, is refused rather than read as some other address.
 */
function ipv6Bytes(address: string): number[] | undefined {
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const [head = '', tail] = halves;
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const toWords = (parts: string[]): number[] | undefined => {
    const words: number[] = [];
    for (const [index, part] of parts.entries()) {
      if (HEX_GROUP.test(part)) {
        words.push(parseInt(part, 16));
      } else if (index === parts.length - 1 && isIPv4(part)) {
        const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
        words.push((a << 8) | b, (c << 8) | d);
      } else {
        return undefined;
      }
    }
    return words;
  };
  const before = toWords(groups(head));
  const after = tail === undefined ? [] : toWords(groups(tail));
  if (before === undefined || after === undefined) return undefined;
  const missing = 8 - before.length - after.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const words = [...before, ...Array<number>(missing).fill(0), ...after];
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}

function addressBytes(address: string, family: IpFamily): number[] | undefined {
  return family === 'ipv4' ? address.split('.').map(Number) : ipv6Bytes(address);
}

function hostBitsAreZero(bytes: readonly number[], prefix: number): boolean {
  return bytes.every((byte, index) => {
    const networkBits = Math.min(8, Math.max(0, prefix - index * 8));
    const hostMask = 0xff >> networkBits;
    return (byte & hostMask) === 0;
  });
}

/**
 * `203.0.113.0/24` or `2001:db8::/32`; a bare address counts as its own /32 or /128. Host bits must be zero:
 * `203.0.113.7/24` is refused rather than read as the whole /24, since a typo must never widen access.
 */
export function parseCidr(text: string): CidrReading {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const family: IpFamily | undefined = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  const bytes = family === undefined ? undefined : addressBytes(address, family);
  if (family === undefined || bytes === undefined) {
    return { ok: false, reason: 'not an IPv4 or IPv6 address or CIDR block' };
  }
  // ::ffff:10.0.0.0/120 would match what the allowlist checks as 10.0.0.x only by accident of the encoding.
  if (family === 'ipv6' && canonicalAddress(address)?.family === 'ipv4') {
    return { ok: false, reason: 'an IPv4-mapped IPv6 block: write it as an IPv4 block' };
  }
  const maxPrefix = family === 'ipv4' ? 32 : 128;
  const prefixText = slash === -1 ? String(maxPrefix) : text.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= maxPrefix)) {
    return { ok: false, reason: `the prefix length must be a whole number from 0 to ${maxPrefix}` };
  }
  if (!hostBitsAreZero(bytes, prefix)) {
    return { ok: false, reason: 'host bits are set: give the network address of the block' };
  }
  return { ok: true, cidr: { address, prefix, family } };
}

/**
 * The caller's address as the allowlist sees it: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, how a dual-stack
 * socket reports an IPv4 peer) is its IPv4 address. Undefined for anything that is not an IP address this module can
 * read whole, a zone id (`%eth0`) included: API Gateway never sends one, and an unreadable source is never allowed.
 */
export function canonicalAddress(
  text: string,
): { readonly address: string; readonly family: IpFamily } | undefined {
  if (isIPv4(text)) return { address: text, family: 'ipv4' };
  const bytes = isIPv6(text) ? ipv6Bytes(text) : undefined;
  if (bytes === undefined) return undefined;
  const mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? { address: bytes.slice(12).join('.'), family: 'ipv4' } : { address: text, family: 'ipv6' };
}

/** A block as the check reads it: the network's bytes (host bits zero) and how many leading bits count. */
interface Block {
  readonly family: IpFamily;
  readonly prefix: number;
  readonly bytes: readonly number[];
}

/** Whether `bytes` (an address of the block's family) starts with the block's `prefix` bits. */
function inBlock(bytes: readonly number[], block: Block): boolean {
  for (let index = 0; index * 8 < block.prefix; index++) {
    const bits = Math.min(8, block.prefix - index * 8);
    const mask = (0xff << (8 - bits)) & 0xff;
    if (((bytes[index] ?? 0) & mask) !== ((block.bytes[index] ?? 0) & mask)) return false;
  }
  return true;
}

/** An app's allowed networks. An empty list allows nothing; no allowlist at all is represented by its absence. */
export class SourceAllowlist {
  /**
   * Each block with its family: a source is checked against blocks of its own family only. Read as one address
   * space, an IPv6 block that holds the IPv4-mapped range (`::/0`) would let every IPv4 caller in.
   */
  private readonly blocks: readonly Block[];

  constructor(readonly cidrs: readonly Cidr[]) {
    this.blocks = cidrs.flatMap(({ address, prefix, family }) => {
      const bytes = addressBytes(address, family);
      return bytes === undefined ? [] : [{ family, prefix, bytes }];
    });
  }

  /** Whether a request from `sourceIp` may use the app's keys; an unknown or unparsable source never may. */
  allows(sourceIp: string | undefined): boolean {
    const source = sourceIp === undefined ? undefined : canonicalAddress(sourceIp);
    const bytes = source && addressBytes(source.address, source.family);
    return (
      bytes !== undefined &&
      this.blocks.some((block) => block.family === source?.family && inBlock(bytes, block))
    );
  }
}
