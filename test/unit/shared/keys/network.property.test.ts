import fc from 'fast-check';
import { BlockList } from 'node:net';
import { parseCidr, SourceAllowlist, type Cidr } from '../../../../shared/keys/network';
import { expectToBe } from '../../../support/properties/cheap-expect';
import { blockBits, formatIpv4, formatIpv6, type Family } from '../../../support/properties/network-model';

const BITS = { 4: 32, 6: 128 } as const;

interface Case {
  readonly blocks: readonly { readonly family: Family; readonly network: bigint; readonly prefix: number }[];
  /** The source as API Gateway reports it, and the address and family node:net's BlockList is asked about. */
  readonly source: { readonly text: string; readonly address: string; readonly family: Family };
}

const familyArb = fc.constantFrom<Family>(4, 6);

const blockArb = familyArb.chain((family) =>
  fc
    .tuple(fc.bigInt({ min: 0n, max: (1n << BigInt(BITS[family])) - 1n }), fc.nat({ max: BITS[family] }))
    .map(([value, prefix]) => ({ family, network: blockBits(family, value, prefix).network, prefix })),
);

/** An address near a block (its network with one bit flipped, or random host bits), or anywhere. */
function sourceArb(blocks: Case['blocks']): fc.Arbitrary<Case['source']> {
  const near = fc
    .tuple(fc.constantFrom(...blocks), fc.nat({ max: 127 }), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }))
    .map(([block, bit, host]) => {
      const bits = BITS[block.family];
      const flipped = block.network ^ (1n << BigInt(bit % bits));
      const inside = block.network | (host & blockBits(block.family, 0n, block.prefix).hostMask);
      return { family: block.family, value: bit % 2 === 0 ? flipped : inside };
    });
  const anywhere = familyArb.chain((family) =>
    fc.bigInt({ min: 0n, max: (1n << BigInt(BITS[family])) - 1n }).map((value) => ({ family, value })),
  );
  return fc
    .tuple(fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: anywhere }), fc.boolean())
    .filter(([{ family, value }]) => family === 4 || value >> 32n !== 0xffffn)
    .map(([{ family, value }, alternate]) => {
      if (family === 6) {
        const address = formatIpv6(value, alternate);
        return { text: address, address, family };
      }
      const address = formatIpv4(value);
      // A dual-stack socket reports an IPv4 caller as ::ffff:a.b.c.d: the same caller.
      return { text: alternate ? `::ffff:${address}` : address, address, family };
    });
}

const caseArb: fc.Arbitrary<Case> = fc
  .array(blockArb, { minLength: 1, maxLength: 4 })
  .chain((blocks) => sourceArb(blocks).map((source) => ({ blocks, source })));

const familyName = (family: Family) => (family === 4 ? 'ipv4' : 'ipv6');

function cidrOf({ family, network, prefix }: Case['blocks'][number]): Cidr {
  const text = `${family === 4 ? formatIpv4(network) : formatIpv6(network, true)}/${prefix}`;
  const reading = parseCidr(text);
  if (!reading.ok) throw new Error(`${text}: ${reading.reason}`);
  return reading.cidr;
}

/** node:net's BlockList, one per family (as the allowlist checked before): the reference. */
function blockListAllows({ blocks, source }: Case): boolean {
  const list = new BlockList();
  for (const block of blocks) {
    if (block.family === source.family) {
      const { address, prefix } = cidrOf(block);
      list.addSubnet(address, prefix, familyName(block.family));
    }
  }
  return list.check(source.address, familyName(source.family));
}

describe('SourceAllowlist against node:net BlockList', () => {
  it('allows exactly the sources BlockList finds in a block of their own family, at every prefix length', () => {
    const seen = { allowed: 0, refused: 0 };
    fc.assert(
      fc.property(caseArb, (testCase) => {
        const expected = blockListAllows(testCase);

        const allowed = new SourceAllowlist(testCase.blocks.map(cidrOf)).allows(testCase.source.text);

        expectToBe(allowed, expected);
        seen[expected ? 'allowed' : 'refused']++;
      }),
      { numRuns: 3_000 },
    );
    // Both answers are reached often: the sources sit on both sides of the blocks' edges.
    expect(Math.min(seen.allowed, seen.refused)).toBeGreaterThan(500);
  });
});
