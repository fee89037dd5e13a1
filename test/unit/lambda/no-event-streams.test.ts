import { EventStreamSerde, eventStreamSerdeProvider } from '../../../lambda/no-event-streams';

describe("the Lambda bundles' stand-in for @smithy/core/event-streams", () => {
  it('says, should an event stream ever be read or written, that the codec is not bundled', () => {
    const message = 'event streams are not part of this bundle (lambda/no-event-streams.ts)';

    const serde = new EventStreamSerde();

    expect(() => serde.serializeEventStream()).toThrow(message);
    expect(() => serde.deserializeEventStream()).toThrow(message);
    expect(() => eventStreamSerdeProvider()).toThrow(message);
  });
});
