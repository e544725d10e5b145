import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdmissionRequest, admissionRefusal } from './admission.ts';

const limits = {
  maxFileBytes: 1048576,
  maxFiles: 5,
  maxFields: 100,
  maxFieldBytes: 65536,
  maxConcurrentUploads: 8,
  uploadTimeoutMs: 60_000,
  maxUploadsPerClient: 2,
  maxTextBytes: 1048576,
  listPageBytes: 4194304,
};
const open = { enabled: true, websites: [] as string[], blockedIps: [] as string[] };
const plain: AdmissionRequest = { ip: '203.0.113.7', origin: undefined, referer: undefined, contentType: 'application/json', contentLength: '20' };
/** The largest multipart body the limits above allow (submission-body.ts maxMultipartBytes). */
const MULTIPART_CAP = 5 * (1048576 + 1024) + 100 * (65536 + 1024) + 64 * 1024;

describe('admission of a submission before its body is read (contract D15, D16, D19)', () => {
  const cases: Array<[string, Partial<typeof open>, Partial<AdmissionRequest>, number | undefined, RegExp?]> = [
    ['admits a plain submission to an open form', {}, {}, undefined],
    ['refuses a disabled form with 409', { enabled: false }, {}, 409, /not accepting submissions/],
    ['refuses a disabled form before anything else', { enabled: false, blockedIps: ['203.0.113.7'] }, {}, 409],
    ['admits any origin when the form lists no websites', {}, { origin: 'https://evil.example' }, undefined],
    ['admits a listed origin', { websites: ['https://site.example'] }, { origin: 'https://site.example' }, undefined],
    ['refuses an origin that is not listed', { websites: ['https://site.example'] }, { origin: 'https://evil.example' }, 403, /this website/],
    [
      'takes the origin from Referer when Origin is missing',
      { websites: ['https://site.example'] },
      { referer: 'https://site.example/contact?x=1' },
      undefined,
    ],
    ['counts Origin: null as unknown', { websites: ['https://site.example'] }, { origin: 'null' }, 403],
    ['refuses an unknown origin when websites are listed', { websites: ['https://site.example'] }, {}, 403],
    ['checks the website before the address', { websites: ['https://site.example'], blockedIps: ['203.0.113.7'] }, {}, 403, /this website/],
    ['refuses a blocked address', { blockedIps: ['203.0.113.7'] }, {}, 403, /your address/],
    ['refuses an address inside a blocked range', { blockedIps: ['203.0.113.0/24'] }, {}, 403, /your address/],
    ['refuses an IPv4-mapped IPv6 address of a blocked range', { blockedIps: ['203.0.113.0/24'] }, { ip: '::ffff:203.0.113.9' }, 403],
    ['refuses an IPv6 address inside a blocked range', { blockedIps: ['2001:db8::/32'] }, { ip: '2001:db8::1' }, 403],
    ['admits an address outside the blocked ranges', { blockedIps: ['198.51.100.0/24', '2001:db8::/32'] }, {}, undefined],
    [
      'admits a multipart body announcing exactly the cap',
      {},
      { contentType: 'multipart/form-data; boundary=x', contentLength: String(MULTIPART_CAP) },
      undefined,
    ],
    [
      'refuses a multipart body announcing one byte over the cap with 413',
      {},
      { contentType: 'Multipart/Form-Data; boundary=x', contentLength: String(MULTIPART_CAP + 1) },
      413,
      /size limit/,
    ],
    ['leaves a large JSON body to the body limit', {}, { contentType: 'application/json', contentLength: String(MULTIPART_CAP + 1) }, undefined],
    [
      'admits a multipart body without Content-Length (chunked): its parts are limited as they stream',
      {},
      { contentType: 'multipart/form-data; boundary=x', contentLength: undefined },
      undefined,
    ],
  ];
  for (const [name, form, request, status, text] of cases) {
    it(name, () => {
      const refusal = admissionRefusal({ ...open, ...form }, { ...plain, ...request }, limits);
      assert.equal(refusal?.status, status);
      if (text) assert.match(refusal!.message, text);
    });
  }
});
