import { createHash } from 'node:crypto';

/**
 * A synthesized template as one digest per resource and output, so a test can show that a stack's template is
 * exactly what an earlier commit made (same logical IDs, same properties) without keeping megabytes of JSON: asset
 * hashes (the bundles' and nested templates' S3 keys) are replaced by a placeholder first, since they change with any
 * line of Lambda code, not with the stack.
 */
export interface TemplateFingerprint {
  /** `<logical ID>` → SHA-256 of the resource (type, properties, dependencies, policies, metadata) without asset hashes. */
  readonly resources: Readonly<Record<string, string>>;
  readonly outputs: Readonly<Record<string, string>>;
}

const ASSET_HASH = /[0-9a-f]{64}/g;

function digest(value: unknown): string {
  const text = JSON.stringify(value).replace(ASSET_HASH, '<asset hash>');
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

export function fingerprintOf(template: unknown): TemplateFingerprint {
  const json = template as { Resources?: Record<string, unknown>; Outputs?: Record<string, unknown> };
  const digests = (record: Record<string, unknown> = {}) =>
    Object.fromEntries(
      Object.entries(record)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, value]) => [id, digest(value)]),
    );
  return { resources: digests(json.Resources), outputs: digests(json.Outputs) };
}
