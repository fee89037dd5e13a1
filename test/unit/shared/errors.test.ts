import { errorCode, errorMessage, errorName } from '../../../shared/errors';

class ServiceError extends Error {
  override readonly name = 'ResourceNotFoundException';
}

describe('error helpers', () => {
  it.each<[string, unknown, string | undefined, string | undefined, string | undefined]>([
    ['an Error', new Error('boom'), 'boom', 'Error', undefined],
    [
      'an Error subclass with its own name',
      new ServiceError('no secret'),
      'no secret',
      'ResourceNotFoundException',
      undefined,
    ],
    [
      "a Node system error's shape",
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' }),
      'connect ECONNREFUSED 127.0.0.1:4566',
      'Error',
      'ECONNREFUSED',
    ],
    [
      'a plain object shaped like an error (another realm)',
      { name: 'TimeoutError', message: 'aborted', code: 'ETIMEDOUT' },
      'aborted',
      'TimeoutError',
      'ETIMEDOUT',
    ],
    [
      'properties that are not strings',
      { name: 1, message: ['x'], code: 404 },
      undefined,
      undefined,
      undefined,
    ],
    ['a thrown string', 'boom', undefined, undefined, undefined],
    ['undefined', undefined, undefined, undefined, undefined],
    ['null', null, undefined, undefined, undefined],
  ])('reads %s', (_label, thrown, message, name, code) => {
    expect([errorMessage(thrown), errorName(thrown), errorCode(thrown)]).toEqual([message, name, code]);
  });
});
