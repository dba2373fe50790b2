// Webhook signatures: `deviceid-signature: t=<unix seconds>,v1=<hex>` where
// v1 = HMAC-SHA256(secret, `${t}.${rawBody}`) and the key is the signing
// secret's text (`whsec_…`) as UTF-8. clients/node/webhooks.ts verifies.
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'deviceid-signature';

export function signatureHeader(secret: string, rawBody: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
