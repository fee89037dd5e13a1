/**
 * IP addresses and CIDR blocks as numbers, written from RFC 4291 and RFC 4632 rather than with node:net, so the
 * property tests check the handler's allowlist against arithmetic of their own. Both the generators (which need
 * addresses inside and outside a block) and the contract model (which decides) use it.
 */

export type Family = 4 | 6;

export interface AddressModel {
  readonly family: Family;
  /** The address as an unsigned 32- or 128-bit number. */
  readonly value: bigint;
}

const BITS: Readonly<Record<Family, number>> = { 4: 32, 6: 128 };

/** A decimal octet as RFC 3986's dec-octet: 0 to 255, no leading zero. */
function octet(text: string): bigint | undefined {
  return /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/.test(text) ? BigInt(text) : undefined;
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    const byte = octet(part);
    if (byte === undefined) return undefined;
    value = (value << 8n) | byte;
  }
  return value;
}

/** The 16-bit words of one side of `::`, an IPv4 tail counting as two; undefined when malformed. */
function words(side: string, ipv4TailAllowed: boolean): bigint[] | undefined {
  if (side === '') return [];
  const groups = side.split(':');
  const result: bigint[] = [];
  for (const [index, group] of groups.entries()) {
    if (ipv4TailAllowed && index === groups.length - 1 && group.includes('.')) {
      const tail = parseIpv4(group);
      if (tail === undefined) return undefined;
      result.push(tail >> 16n, tail & 0xffffn);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      result.push(BigInt(`0x${group}`));
    } else {
      return undefined;
    }
  }
  return result;
}

function parseIpv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const [head = '', tail] = halves;
  const before = words(head, tail === undefined);
  const after = tail === undefined ? [] : words(tail, true);
  if (before === undefined || after === undefined) return undefined;
  const missing = 8 - before.length - after.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const all = [...before, ...Array<bigint>(tail === undefined ? 0 : missing).fill(0n), ...after];
  return all.reduce((value, word) => (value << 16n) | word, 0n);
}

/** An address as the allowlist sees it: an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is its IPv4 address. */
export function addressModel(text: string): AddressModel | undefined {
  const ipv4 = parseIpv4(text);
  if (ipv4 !== undefined) return { family: 4, value: ipv4 };
  const ipv6 = parseIpv6(text);
  if (ipv6 === undefined) return undefined;
  return ipv6 >> 32n === 0xffffn ? { family: 4, value: ipv6 & 0xffffffffn } : { family: 6, value: ipv6 };
}

/** Whether `address` lies in `cidr` (`<network>/<prefix>`, or a bare address: the block of that one address). */
export function inBlockModel(address: AddressModel, cidr: string): boolean {
  const [networkText = '', prefixText] = cidr.split('/');
  const network = addressModel(networkText);
  if (network === undefined || network.family !== address.family) return false;
  const hostBits = BigInt(
    BITS[network.family] - (prefixText === undefined ? BITS[network.family] : Number(prefixText)),
  );
  return network.value >> hostBits === address.value >> hostBits;
}

export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** Eight groups, lower case; with `compress`, the longest run of two or more zero groups written as `::`. */
export function formatIpv6(value: bigint, compress: boolean): string {
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) =>
    ((value >> shift) & 0xffffn).toString(16),
  );
  if (!compress) return groups.join(':');
  let best = { start: -1, length: 1 };
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === '0') length++;
    if (length > best.length) best = { start, length };
  }
  if (best.start === -1) return groups.join(':');
  const head = groups.slice(0, best.start).join(':');
  const tail = groups.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

/** The block's network value and the mask of its host bits. */
export function blockBits(
  family: Family,
  value: bigint,
  prefix: number,
): { network: bigint; hostMask: bigint } {
  const hostMask = (1n << BigInt(BITS[family] - prefix)) - 1n;
  return { network: value & ~hostMask & ((1n << BigInt(BITS[family])) - 1n), hostMask };
}
