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
  readonly outdir: string;
  readonly templatePaths: readonly string[];
  /** Folder in cdk.out holding the bundled payment Lambda (index.js), as it would be uploaded. */
  readonly paymentAssetDir: string;
  /** The same for the rotation Lambda, when the app was synthesized with scheduled rotation. */
  readonly rotationAssetDir?: string;
}

/** Environment variables that tell the project's two functions apart in a template. */
const PAYMENT_MARK = 'KEYS_SECRET_ID';
const ROTATION_MARK = 'ROTATION_KEEP_KEYS';

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
    const assetDirOf = (mark: string): string | undefined => {
      const fn = Object.values(template.Resources).find(
        (resource) =>
          resource.Type === 'AWS::Lambda::Function' &&
          resource.Properties?.Environment?.Variables?.[mark] !== undefined,
      );
      const s3Key = fn?.Properties?.Code?.S3Key;
      if (typeof s3Key !== 'string') return undefined;
      const asset = manifest.files[s3Key.replace(/\.zip$/, '')];
      if (asset === undefined) throw new Error(`no asset for ${s3Key} in ${assetsPath}`);
      return join(outdir, asset.source.path);
    };
    const paymentAssetDir = assetDirOf(PAYMENT_MARK);
    if (paymentAssetDir === undefined) continue;
    const rotationAssetDir = assetDirOf(ROTATION_MARK);
    return { outdir, templatePaths, paymentAssetDir, ...(rotationAssetDir ? { rotationAssetDir } : {}) };
  }
  throw new Error(`no payment Lambda (a function with ${PAYMENT_MARK}) in ${templatePaths.join(', ')}`);
}
