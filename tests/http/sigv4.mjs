// AWS SigV4 query presigning (the server side of a presign callback), for the tests'
// S3 server. Secrets stay in this process; a page or worker only ever sees URLs.
import { createHash, createHmac } from 'node:crypto';

const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const hmac = (k, s) => createHmac('sha256', k).update(s).digest();

/// A presigned URL for `method` on `key` (path-style: `endpoint/bucket/key`), with extra
/// query parameters (a ListObjectsV2 page) signed in.
export function presign({ endpoint, bucket, key, method, query = {}, creds, expires = 900, now = new Date() }) {
  const u = new URL(endpoint);
  const path = key === '' ? `/${bucket}` : `/${bucket}/${key.split('/').map(enc).join('/')}`;
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${creds.region}/s3/aws4_request`;
  const params = {
    ...query,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${creds.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(expires),
    'X-Amz-SignedHeaders': 'host',
  };
  if (creds.sessionToken) params['X-Amz-Security-Token'] = creds.sessionToken;
  const canonicalQuery = Object.keys(params)
    .sort()
    .map((k) => `${enc(k)}=${enc(params[k])}`)
    .join('&');
  const canonical = [method, path, canonicalQuery, `host:${u.host}\n`, 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let k = hmac(`AWS4${creds.secretAccessKey}`, day);
  k = hmac(k, creds.region);
  k = hmac(k, 's3');
  k = hmac(k, 'aws4_request');
  const signature = createHmac('sha256', k).update(toSign).digest('hex');
  return `${u.origin}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

/// The presign callback the engine calls: `(method, key, page?) => url`. `LIST` signs a
/// ListObjectsV2 request on the bucket for the key prefix `key`.
export function presigner({ endpoint, bucket, creds }) {
  return (method, key, page) => {
    if (method === 'LIST') {
      const query = { 'list-type': '2', prefix: key };
      if (page?.delimiter) query.delimiter = page.delimiter;
      if (page?.continuationToken) query['continuation-token'] = page.continuationToken;
      return presign({ endpoint, bucket, key: '', method: 'GET', query, creds });
    }
    if (!['GET', 'HEAD', 'PUT', 'DELETE'].includes(method)) throw new Error(`cannot presign ${method}`);
    return presign({ endpoint, bucket, key, method, creds });
  };
}
