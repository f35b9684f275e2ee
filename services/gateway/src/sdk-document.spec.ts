/**
 * The SDK (libs/sdk) is generated from this route table's OpenAPI document, which it keeps as
 * openapi.json. A route added, removed or changed without regenerating it fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApi } from './openapi';
import { ROUTES } from './routes';
import { API_VERSION } from './main';

it("the SDK's OpenAPI document is this route table's (else: npm run build && npm run generate -w @mailroom/sdk)", () => {
  const committed = JSON.parse(readFileSync(path.join(__dirname, '../../../libs/sdk/openapi.json'), 'utf8'));
  expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApi(ROUTES, API_VERSION))));
});
