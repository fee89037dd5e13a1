import { canonicalAddress, parseCidr, SourceAllowlist, type Cidr } from '../../../../shared/keys/network';

function cidr(text: string): Cidr {
  const reading = parseCidr(text);
  if (!reading.ok) throw new Error(`test fixture ${text}: ${reading.reason}`);
  return reading.cidr;
}

describe('parseCidr', () => {
  it.each([
    ['an IPv4 block', '203.0.113.0/24', { address: '203.0.113.0', prefix: 24, family: 'ipv4' }],
    ['an IPv6 block', '2001:db8::/32', { address: '2001:db8::', prefix: 32, family: 'ipv6' }],
    [
      'a bare IPv4 address, as its /32',
      '198.51.100.7',
      { address: '198.51.100.7', prefix: 32, family: 'ipv4' },
    ],
    [
      'a bare IPv6 address, as its /128',
      '2001:db8::1',
      { address: '2001:db8::1', prefix: 128, family: 'ipv6' },
    ],
    ['every IPv4 address', '0.0.0.0/0', { address: '0.0.0.0', prefix: 0, family: 'ipv4' }],
    [
      'an IPv6 block whose prefix ends inside a byte',
      'fe80::/10',
      { address: 'fe80::', prefix: 10, family: 'ipv6' },
    ],
  ])('reads %s', (_label, text, expected) => {
    expect(parseCidr(text)).toEqual({ ok: true, cidr: expected });
  });

  it.each([
    [
      'host bits set in an IPv4 block',
      '203.0.113.7/24',
      'host bits are set: give the network address of the block',
    ],
    [
      'host bits set in an IPv6 block',
      '2001:db8::1/32',
      'host bits are set: give the network address of the block',
    ],
    ['an IPv4 prefix over 32', '203.0.113.0/33', 'the prefix length must be a whole number from 0 to 32'],
    ['an IPv6 prefix over 128', '2001:db8::/129', 'the prefix length must be a whole number from 0 to 128'],
    ['an empty prefix', '203.0.113.0/', 'the prefix length must be a whole number from 0 to 32'],
    ['a negative prefix', '203.0.113.0/-1', 'the prefix length must be a whole number from 0 to 32'],
    ['an address out of range', '203.0.113.256/32', 'not an IPv4 or IPv6 address or CIDR block'],
    ['a host name', 'example.com/32', 'not an IPv4 or IPv6 address or CIDR block'],
    [
      'an IPv4-mapped IPv6 block',
      '::ffff:203.0.113.0/120',
      'an IPv4-mapped IPv6 block: write it as an IPv4 block',
    ],
    ['an IPv6 block with a zone id', 'fe80::%eth0/64', 'not an IPv4 or IPv6 address or CIDR block'],
    ['an IPv6 address with a zone id', 'fe80::1%eth0', 'not an IPv4 or IPv6 address or CIDR block'],
  ])('refuses %s', (_label, text, reason) => {
    expect(parseCidr(text)).toEqual({ ok: false, reason });
  });
});

describe('canonicalAddress', () => {
  it.each([
    ['an IPv4 address', '127.0.0.1', { address: '127.0.0.1', family: 'ipv4' }],
    [
      'an IPv4-mapped IPv6 address, as a dual-stack socket reports it',
      '::ffff:127.0.0.1',
      { address: '127.0.0.1', family: 'ipv4' },
    ],
    ['the same in hex', '::ffff:7f00:1', { address: '127.0.0.1', family: 'ipv4' }],
    ['the same in upper case', '::FFFF:203.0.113.9', { address: '203.0.113.9', family: 'ipv4' }],
    ['an IPv6 address', '2001:db8::5', { address: '2001:db8::5', family: 'ipv6' }],
  ])('reads %s', (_label, text, expected) => {
    expect(canonicalAddress(text)).toEqual(expected);
  });

  it.each([
    ['a host name', 'localhost'],
    // node:net accepts a zone id; read naively, `77%eth0` became 0 and the address 198.51.100.0.
    ['an IPv4-mapped address with a zone id', '::ffff:198.51.100.77%eth0'],
    ['the same in hex with a zone id', '::ffff:c633:644d%1'],
    ['an IPv6 address with a zone id', 'fe80::1%eth0'],
  ])('refuses %s: not an address it can read whole', (_label, text) => {
    expect(canonicalAddress(text)).toBeUndefined();
  });
});

describe('SourceAllowlist', () => {
  const allowlist = new SourceAllowlist([cidr('203.0.113.0/24'), cidr('2001:db8::/32')]);

  // Addresses inside and outside the blocks, both families, IPv4-mapped included, at every prefix length:
  // network.property.test.ts, against node:net's BlockList.
  it.each([
    ['an unknown source', undefined],
    ['a source that is not an address', 'not-an-address'],
  ])('refuses %s', (_label, source) => {
    expect(allowlist.allows(source)).toBe(false);
  });

  it.each([
    // Read naively, the first was 198.51.100.0: inside the /32 below.
    ['an IPv4-mapped address with a zone id', '::ffff:198.51.100.77%eth0', '198.51.100.0'],
    ['the allowed address itself with a zone id', '::ffff:198.51.100.0%eth0', '::ffff:198.51.100.0'],
    ['an IPv6 address inside the block with a zone id', '2001:db8::7%eth0', '2001:db8::7'],
  ])('refuses %s, where an allowed address without it passes', (_label, source, allowed) => {
    const fenced = new SourceAllowlist([cidr('198.51.100.0/32'), cidr('2001:db8::/32')]);

    expect(fenced.allows(source)).toBe(false);
    expect(fenced.allows(allowed)).toBe(true);
  });

  it('never lets an IPv4 caller through an IPv6 block, even one that holds the IPv4-mapped range', () => {
    const ipv6Only = new SourceAllowlist([cidr('::/0')]);

    expect(ipv6Only.allows('2001:db8::1')).toBe(true);
    expect(ipv6Only.allows('203.0.113.9')).toBe(false);
    expect(ipv6Only.allows('::ffff:203.0.113.9')).toBe(false);
  });

  it('allows nothing when the list is empty', () => {
    expect(new SourceAllowlist([]).allows('203.0.113.9')).toBe(false);
  });
});
