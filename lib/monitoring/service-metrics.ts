import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SERVICE_DIMENSION, type MetricName } from '../../lambda/payment/metric-names';

/** One of the payment Lambda's metrics for one service; summed per minute unless `options` says otherwise. */
export type ServiceMetric = (name: MetricName, options?: cloudwatch.MetricOptions) => cloudwatch.Metric;

export const ONE_MINUTE = Duration.minutes(1);
export const FIVE_MINUTES = Duration.minutes(5);
export const ONE_HOUR = Duration.hours(1);

/** The metrics the Lambda emits in `namespace` under the dimension `Service=<serviceName>`. */
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
