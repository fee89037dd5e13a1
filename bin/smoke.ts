// The smoke test of a deployed API: `npm run smoke -- --url <url> --app-id <id>` (key in APP_KEY) or
// `--stack <name> --app-id <id>`. All logic is in tools/smoke/.
import { runSmoke } from '../tools/smoke/main';

void runSmoke(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
