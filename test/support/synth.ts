import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const PROJECT_ROOT = join(__dirname, '..', '..');

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: {
    readonly Code?: { readonly S3Key?: unknown };
    readonly Environment?: { readonly Variables?: Readonly<Record<string, unknown>> };
  };
}

interface AssetManifest {
  readonly files: Readonly<
    Record<string, { readonly source: { readonly path: string; readonly packaging?: string } }>
  >;
}

export interface SynthesizedApp {
  /** Folder in cdk.out holding the bundled payment Lambda (index.js), as it would be uploaded. */
  readonly paymentAssetDir: string;
  /** The same for the rotation Lambda, when the app was synthesized with scheduled rotation. */
  readonly rotationAssetDir?: string;
  /** The same for the key registry monitor, which every stack has. */
  readonly monitorAssetDir: string;
}

type Variables = Readonly<Record<string, unknown>>;

/**
 * Environment variables that tell the project's functions apart in a template: the payment Lambda alone has a key
 * cache, the rotation function alone keeps keys, and the monitor reads the registry without a cache.
 */
const PAYMENT_MARK = (variables: Variables): boolean => variables.KEY_CACHE_TTL_SECONDS !== undefined;
const ROTATION_MARK = (variables: Variables): boolean => variables.ROTATION_KEEP_KEYS !== undefined;
const MONITOR_MARK = (variables: Variables): boolean =>
  variables.KEYS_SECRET_ID !== undefined && variables.KEY_CACHE_TTL_SECONDS === undefined;

/** Runs the real CLI (`cdk synth`) offline into `outdir`, as a user's deploy would synthesize. */
export async function synthesizeApp(
  outdir: string,
  context: Readonly<Record<string, string>> = {},
): Promise<SynthesizedApp> {
  const contextArgs = Object.entries(context).flatMap(([key, value]) => ['--context', `${key}=${value}`]);
  await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--output', outdir, ...contextArgs], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });

  const templatePaths = readdirSync(outdir)
    .filter((name) => name.endsWith('.template.json'))
    .map((name) => join(outdir, name));
  for (const templatePath of templatePaths) {
    const template = JSON.parse(readFileSync(templatePath, 'utf8')) as {
      Resources: Record<string, TemplateResource>;
    };
    const assetsPath = templatePath.replace(/\.template\.json$/, '.assets.json');
    const manifest = JSON.parse(readFileSync(assetsPath, 'utf8')) as AssetManifest;
    const assetDirOf = (mark: (variables: Variables) => boolean): string | undefined => {
      const fn = Object.values(template.Resources).find(
        (resource) =>
          resource.Type === 'AWS::Lambda::Function' &&
          mark(resource.Properties?.Environment?.Variables ?? {}),
      );
      const s3Key = fn?.Properties?.Code?.S3Key;
      if (typeof s3Key !== 'string') return undefined;
      const asset = manifest.files[s3Key.replace(/\.zip$/, '')];
      if (asset === undefined) throw new Error(`no asset for ${s3Key} in ${assetsPath}`);
      return join(outdir, asset.source.path);
    };
    const paymentAssetDir = assetDirOf(PAYMENT_MARK);
    const monitorAssetDir = assetDirOf(MONITOR_MARK);
    if (paymentAssetDir === undefined || monitorAssetDir === undefined) continue;
    const rotationAssetDir = assetDirOf(ROTATION_MARK);
    return { paymentAssetDir, monitorAssetDir, ...(rotationAssetDir ? { rotationAssetDir } : {}) };
  }
  throw new Error(`no payment Lambda and key registry monitor in ${templatePaths.join(', ')}`);
}
