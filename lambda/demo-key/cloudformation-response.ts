import { request } from 'node:https';

/** The part of a CloudFormation custom resource event this function reads. */
export interface CustomResourceEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly ResponseURL: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: Readonly<Record<string, unknown>>;
}

export interface CustomResourceResponse {
  readonly Status: 'SUCCESS' | 'FAILED';
  /** One line, never a secret value. */
  readonly Reason: string;
  readonly PhysicalResourceId: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  /** The response carries no data, and CloudFormation is told to show none. */
  readonly NoEcho: true;
}

export type Respond = (url: string, response: CustomResourceResponse) => Promise<void>;

/** PUTs the response to the pre-signed S3 URL CloudFormation gave, as its custom resource protocol asks. */
export const respondToCloudFormation: Respond = (url, response) =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify(response);
    const put = request(
      url,
      {
        method: 'PUT',
        headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`CloudFormation's response URL answered ${status}`));
        });
      },
    );
    put.on('timeout', () => put.destroy(new Error("CloudFormation's response URL did not answer in 10 s")));
    put.on('error', reject);
    put.end(body);
  });
