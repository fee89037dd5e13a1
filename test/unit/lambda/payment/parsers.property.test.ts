import fc from 'fast-check';
import { contentTypeProblem, parseMediaType } from '../../../../lambda/payment/media-type';
import { readJsonBody } from '../../../../lambda/payment/request-body';
import {
  bodyFieldsArb,
  contentTypeArb,
  contentTypeNearMissArb,
  contentTypePartsArb,
  edgyString,
} from '../../../support/properties/arbitraries';
import {
  bodyModel,
  isJsonContentTypeModel,
  mediaTypeModel,
} from '../../../support/properties/contract-model';
import { expectToBe, expectToEqual } from '../../../support/properties/cheap-expect';

describe('parseMediaType against the RFC 9110 grammar written as a regular expression', () => {
  it('accepts exactly what the grammar accepts, and reads the same type, subtype and parameters', () => {
    fc.assert(
      fc.property(
        fc.oneof(contentTypeArb, contentTypeNearMissArb, contentTypePartsArb, edgyString(24)),
        (value) => {
          expectToEqual(parseMediaType(value), mediaTypeModel(value));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('calls a single value JSON exactly when the model does, and any repeat never', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(contentTypeArb, contentTypeNearMissArb), { maxLength: 2 }), (values) => {
        expectToBe(contentTypeProblem(values) === undefined, isJsonContentTypeModel(values));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('readJsonBody against the RFC 8259 model of a body', () => {
  it('finds a body empty, JSON, too large or refused exactly when the model does', () => {
    fc.assert(
      fc.property(bodyFieldsArb, ({ body, isBase64Encoded }) => {
        const request =
          body === undefined || body === null
            ? ({ kind: 'none' } as const)
            : typeof body === 'string'
              ? ({ kind: 'text', text: body, isBase64Encoded: isBase64Encoded === true } as const)
              : ({ kind: 'notText' } as const);

        const reading = readJsonBody(request);

        const verdict = reading.ok
          ? reading.kind
          : reading.problem === 'body_too_large'
            ? 'tooLarge'
            : 'refused';
        expectToBe<string>(verdict, bodyModel(body, isBase64Encoded));
      }),
      { numRuns: 3_000 },
    );
  });
});
