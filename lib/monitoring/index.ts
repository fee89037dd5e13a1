/** Alarms, their topic, the dashboard and the saved queries of the payment API, behind one construct. */
export { Monitoring, type MonitoringProps, type RateLimiterMonitoring } from './monitoring';
export {
  ALARM_EMAIL,
  METRICS_NAMESPACE,
  MONITORING_DEFAULTS,
  MONITORING_LIMITS,
  validateMonitoringOptions,
  type MonitoringOptions,
} from './options';
export { runbookLink, type MonitoringAlarms, type PaymentApiAlarm, type ServiceAlarm } from './alarms';
export { SAVED_QUERIES, type PaymentApiQuery, type SavedQueries, type ServiceQuery } from './saved-queries';
