/** Alarms, their topic, the dashboard and the saved queries of the payment API, behind one construct. */
export { Monitoring, type MonitoringProps } from './monitoring';
export {
  ALARM_EMAIL,
  METRICS_NAMESPACE,
  MONITORING_DEFAULTS,
  MONITORING_LIMITS,
  validateMonitoringOptions,
  type MonitoringOptions,
} from './options';
export { runbookLink, type MonitoringAlarms, type PaymentApiAlarm, type ServiceAlarm } from './alarms';
export { SAVED_QUERIES, type PaymentApiQuery } from './saved-queries';
