/** The integration project's globalTeardown: stops the moto servers shared-moto-setup.ts started. */
import { stopSharedMoto } from './shared-moto-setup';

export default function stopSharedMotoServers(): Promise<void> {
  return stopSharedMoto();
}
