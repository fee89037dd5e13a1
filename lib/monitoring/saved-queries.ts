import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The saved Logs Insights queries every deployment has. */
export type ServiceQuery =
  'requestsByKey' | 'unauthorizedBySource' | 'keyRuleRefusals' | 'keyFailureTimeline' | 'registryByShard';

/** Every saved query: `throttledByApp` exists only with per-app rate limits. */
export type PaymentApiQuery = ServiceQuery | 'throttledByApp';

export type SavedQueries = Readonly<Record<ServiceQuery, logs.QueryDefinition>> & {
  readonly throttledByApp?: logs.QueryDefinition;
};

interface SavedQuery {
  /** Construct id. */
  readonly id: string;
  /** Shown after `<serviceName>/`. */
  readonly name: string;
  readonly query: logs.QueryStringProps;
  /**
   * The log group it reads: the payment Lambda's request lines, or the key registry monitor's shard lines.
   * @default 'payment'
   */
  readonly reads?: 'payment' | 'monitor';
}

/** The saved queries: the name after `<serviceName>/`, and the query over a function's JSON log lines. */
export const SAVED_QUERIES: Readonly<Record<PaymentApiQuery, SavedQuery>> = {
  requestsByKey: {
    id: 'RequestsByKeyQuery',
    name: 'Requests by app and key id',
    query: {
      filterStatements: ['message = "request accepted"'],
      statsStatements: ['count(*) as requests, latest(@timestamp) as lastSeen by appId, keyId'],
      sort: 'appId asc',
    },
  },
  unauthorizedBySource: {
    id: 'UnauthorizedBySourceQuery',
    name: '401s by reason and source IP',
    query: {
      filterStatements: ['message = "request refused" and status = 401'],
      statsStatements: ['count(*) as refusals, latest(@timestamp) as lastSeen by reason, sourceIp, appId'],
      sort: 'refusals desc',
    },
  },
  keyRuleRefusals: {
    id: 'KeyRuleRefusalsQuery',
    name: 'Expired keys and networks not allowed, by app and key id',
    query: {
      // The key matched: the app and key id name a real partner. An expired key says it still uses the old key;
      // a network not allowed, with its source IP, that it calls from a new network.
      filterStatements: [
        'message = "request refused" and (reason = "expired_key" or reason = "source_not_allowed")',
      ],
      statsStatements: [
        'count(*) as refusals, latest(@timestamp) as lastSeen by reason, appId, keyId, sourceIp',
      ],
      sort: 'lastSeen desc',
    },
  },
  keyFailureTimeline: {
    id: 'KeyFailureTimelineQuery',
    name: '503s and key refresh failures per minute',
    query: {
      filterStatements: ['message = "keys unavailable" or message = "keys refresh failed"'],
      statsStatements: [
        'count(*) as events, max(staleKeysAgeSeconds) as maxStaleKeysAgeSeconds, latest(error) as lastError by bin(1m), message',
      ],
    },
  },
  registryByShard: {
    id: 'RegistryByShardQuery',
    name: 'Key registry by shard: fill, apps, keys, expiring, unreadable',
    reads: 'monitor',
    query: {
      // One line per shard per hourly run; the latest of each shows where the registry stands, fullest first.
      filterStatements: ['message = "key shard measured"'],
      statsStatements: [
        'latest(state) as shardState, latest(fillPercent) as fill, latest(bytes) as secretBytes, latest(apps) as appCount, latest(keys) as keyCount, latest(keysExpiringSoon) as expiringSoon, latest(appsElsewhere) as toMove, latest(problem) as lastProblem, latest(@timestamp) as measuredAt by shard',
      ],
      sort: 'fill desc',
    },
  },
  throttledByApp: {
    id: 'ThrottledByAppQuery',
    name: '429s by app',
    query: {
      // Only authenticated requests are limited, so every line names a real partner: the one to talk to.
      filterStatements: ['message = "request refused" and status = 429'],
      statsStatements: ['count(*) as refusals, latest(@timestamp) as lastSeen by appId'],
      sort: 'refusals desc',
    },
  },
};

export interface SavedQueriesProps {
  /** The payment Lambda's log group: its request lines carry the app, the key id, the 401 reason and the source IP. */
  readonly logGroup: logs.ILogGroup;
  /** The key registry monitor's log group: one line per shard per run. */
  readonly monitorLogGroup: logs.ILogGroup;
  /** Prefix of the query names: `<serviceName>/...`, which the console shows as a folder. */
  readonly serviceName: string;
  /** Whether the stack has per-app rate limits: adds "429s by app". */
  readonly rateLimited: boolean;
}

/**
 * The saved queries, created in `scope` (ids from SAVED_QUERIES). The request queries read the Lambda's log group
 * rather than the access log, which lacks the app, the key id and the 401 reason.
 */
export function createSavedQueries(
  scope: Construct,
  { logGroup, monitorLogGroup, serviceName, rateLimited }: SavedQueriesProps,
): SavedQueries {
  const query = (key: PaymentApiQuery): logs.QueryDefinition => {
    const { id, name, query: queryString, reads = 'payment' } = SAVED_QUERIES[key];
    return new logs.QueryDefinition(scope, id, {
      queryDefinitionName: `${serviceName}/${name}`,
      queryString: new logs.QueryString(queryString),
      logGroups: [reads === 'monitor' ? monitorLogGroup : logGroup],
    });
  };
  return {
    requestsByKey: query('requestsByKey'),
    unauthorizedBySource: query('unauthorizedBySource'),
    keyRuleRefusals: query('keyRuleRefusals'),
    keyFailureTimeline: query('keyFailureTimeline'),
    registryByShard: query('registryByShard'),
    ...(rateLimited && { throttledByApp: query('throttledByApp') }),
  };
}
