import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SERVICE_DIMENSION, type MetricName } from '../../lambda/payment/metric-names';
import type { RegistryMetricName } from '../../lambda/registry-monitor/metric-names';

/** A metric of the service: the payment Lambda's, or the key registry monitor's (namespace and dimension alike). */
export type ServiceMetricName = MetricName | RegistryMetricName;

/** One of the service's metrics; summed per minute unless `options` says otherwise. */
export type ServiceMetric = (
  name: ServiceMetricName,
  options?: cloudwatch.MetricOptions,
) => cloudwatch.Metric;

export const ONE_MINUTE = Duration.minutes(1);
export const FIVE_MINUTES = Duration.minutes(5);
export const ONE_HOUR = Duration.hours(1);

/** The metrics the functions emit in `namespace` under the dimension `Service=<serviceName>`. */
export function serviceMetrics(namespace: string, serviceName: string): ServiceMetric {
  return (name, options = {}) =>
    new cloudwatch.Metric({
      namespace,
      metricName: name,
      dimensionsMap: { [SERVICE_DIMENSION]: serviceName },
      statistic: cloudwatch.Stats.SUM,
      period: ONE_MINUTE,
      ...options,
    });
}
