// Sealed identification results: the compact result as JSON, encrypted with
// AES-256-GCM under the project's sealing key. Blob (base64):
//   magic "dsr" 0x01 (4 bytes, also the additional authenticated data)
//   | IV (12 random bytes) | ciphertext | GCM tag (16 bytes).
// clients/node/sealing.ts `unseal` is the other half.
import { createCipheriv, randomBytes } from 'node:crypto';

export const SEALED_MAGIC = Buffer.from([0x64, 0x73, 0x72, 0x01]);
export const SEALING_KEY_BYTES = 32;

export function sealResult(result: unknown, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(SEALED_MAGIC);
  const body = Buffer.concat([cipher.update(JSON.stringify(result)), cipher.final()]);
  return Buffer.concat([SEALED_MAGIC, iv, body, cipher.getAuthTag()]).toString('base64');
}
