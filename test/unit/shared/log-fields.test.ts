import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_FIELDS } from '../../../shared/log-fields';
import { PROJECT_ROOT } from '../../support/markdown';

describe('the log vocabulary', () => {
  it('names API Gateway’s request id one way only', () => {
    const names = Object.keys(LOG_FIELDS);

    expect(names).toContain('apiRequestId');
    expect(names.filter((name) => /request_?id/i.test(name)).sort()).toEqual([
      'apiRequestId',
      'function_request_id',
    ]);
  });

  it('is described field by field in the operations page', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
    const logs = page.slice(page.indexOf('## Logs'), page.indexOf('## Alarms'));

    const undescribed = Object.keys(LOG_FIELDS).filter((name) => !logs.includes(`\`${name}\``));

    expect(undescribed).toEqual([]);
  });
});
