/**
 * The SP metadata an organization's IdP is given (GET /api/v1/auth/sso/saml/metadata/{org_id})
 * validated against the OASIS SAML 2.0 metadata schema with xmllint (xmllint-wasm), offline:
 * fixtures/xsd/saml (the OASIS schema, xml.xsd) and the imported schemas of the npm package
 * @authenio/samlify-xmllint-wasm, their remote schemaLocations pointed at the local copies.
 * With and without the SP's encryption certificate; a document the schema refuses shows the
 * check is real.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';
import { validateXML, type XMLFileInfo } from 'xmllint-wasm';
import { REPO_ROOT } from '@mailroom/testing';
import { SsoSamlClient } from './sso-saml.client';

const local = (...p: string[]) => readFileSync(path.join(REPO_ROOT, 'fixtures', 'xsd', 'saml', ...p), 'utf8');
const npmSchemas = path.dirname(require.resolve('@authenio/samlify-xmllint-wasm/package.json'));
const fromNpm = (name: string): XMLFileInfo => ({ fileName: name, contents: readFileSync(path.join(npmSchemas, 'schemas', name), 'utf8') });

const metadataSchema: XMLFileInfo = {
  fileName: 'saml-schema-metadata-2.0.xsd',
  contents: local('saml-schema-metadata-2.0.xsd')
    .replace('http://www.w3.org/TR/2002/REC-xmldsig-core-20020212/xmldsig-core-schema.xsd', 'xmldsig-core-schema.xsd')
    .replace('http://www.w3.org/TR/2002/REC-xmlenc-core-20021210/xenc-schema.xsd', 'xenc-schema.xsd')
    .replace('http://www.w3.org/2001/xml.xsd', 'xml.xsd'),
};
const preload: XMLFileInfo[] = [
  { fileName: 'xml.xsd', contents: local('xml.xsd') },
  ...['saml-schema-assertion-2.0.xsd', 'xmldsig-core-schema.xsd', 'xenc-schema.xsd', 'XMLSchema.dtd', 'datatypes.dtd'].map(fromNpm),
];

const validate = (xml: string) => validateXML({ xml: { fileName: 'sp-metadata.xml', contents: xml }, schema: metadataSchema, preload });

const ENTITY = 'https://api.example.com/api/v1/auth/sso/saml/metadata/org_0123456789abcdef';
const ACS = 'https://api.example.com/api/v1/auth/sso/saml/callback';
const noFetch = () => Promise.reject(new Error('no network'));

describe('the SP metadata', () => {
  it('validates against the OASIS SAML metadata schema without an encryption key', async () => {
    const xml = new SsoSamlClient(noFetch, undefined).metadata(ENTITY, ACS);
    expect(xml).toContain(`entityID="${ENTITY}"`);
    expect(xml).toContain(`Location="${ACS}"`);
    const result = await validate(xml);
    expect([result.valid, result.errors]).toEqual([true, []]);
  });

  it('validates with the SP encryption certificate (KeyDescriptor use="encryption")', async () => {
    const pems = await generate([{ name: 'commonName', value: 'sp' }], { keySize: 2048, algorithm: 'sha256' });
    const xml = new SsoSamlClient(noFetch, { privateKey: pems.private, certificate: pems.cert }).metadata(ENTITY, ACS);
    expect(xml).toContain('use="encryption"');
    const result = await validate(xml);
    expect([result.valid, result.errors]).toEqual([true, []]);
  });

  it('is checked for real: metadata without its entityID or its ACS is refused', async () => {
    const xml = new SsoSamlClient(noFetch, undefined).metadata(ENTITY, ACS);
    expect((await validate(xml.replace(/ entityID="[^"]+"/, ''))).valid).toBe(false);
    expect((await validate(xml.replace(/<AssertionConsumerService[^>]*\/>/, ''))).valid).toBe(false);
  });
});
