// The key CLI: `npm run keys -- <command>` (or `npx tsx bin/keys.ts <command>`). All logic is in cli/.

// Standard error carries one-line errors only; the SDK's notice about the Node versions of its future releases
// is not about this tool. Set before the SDK creates its first client.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { run } from '../cli/main';

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
);
