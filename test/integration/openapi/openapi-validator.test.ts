/**
 * openapi.yaml against a real OpenAPI 3.1 validator (@seriousme/openapi-schema-validator, the OpenAPI Initiative's
 * JSON Schemas), which is ES-module only and so runs in a Node process of its own.
 */
import { parse, stringify } from 'yaml';
import { loadOpenApiText, validateOpenApi } from '../../support/openapi-document';

describe('openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document for a real validator', async () => {
    const verdict = await validateOpenApi(loadOpenApiText());

    expect(verdict.errors).toBeUndefined();
    expect(verdict).toMatchObject({ valid: true, version: '3.1' });
  });

  it('is held to the validator: a broken copy is refused', async () => {
    const broken = parse(loadOpenApiText()) as {
      components: { securitySchemes: { AppKey: { in: string } } };
    };
    broken.components.securitySchemes.AppKey.in = 'body';

    expect((await validateOpenApi(stringify(broken))).valid).toBe(false);
  });
});
