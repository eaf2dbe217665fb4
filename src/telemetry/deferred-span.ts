import type {
  Attributes,
  AttributeValue,
  Exception,
  Link,
  Span,
  SpanContext,
  SpanStatus,
  TimeInput,
} from '@opentelemetry/api';

/**
 * A span the SDK makes only when something asks for it (ADR 0053, amended 2026-12-07). A tool call's span is
 * timed from the call's arrival (`make` passes that start time), but the SDK's work for it (sampling, ids,
 * attributes, the processor) costs more on a run's answer path than the rest of the tracing together: so it is
 * made after the outcome went to the guest, or before when something records on it (an approval's event). Every
 * method but `spanContext` (with a known context) makes the span.
 */
export class DeferredSpan implements Span {
  #span: Span | undefined;

  /**
   * `known`: the span's context when it is decided before the span is made (its id primed: span-ids.ts), so that
   * asking for it (a tool's `traceparent`, an egress request's header) does not make the span.
   */
  constructor(
    private readonly make: () => Span,
    private readonly known?: SpanContext,
  ) {}

  /** The SDK's span, made now if nothing asked for it before. */
  get span(): Span {
    return (this.#span ??= this.make());
  }

  spanContext(): SpanContext {
    return this.known ?? this.span.spanContext();
  }

  setAttribute(key: string, value: AttributeValue): this {
    this.span.setAttribute(key, value);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    this.span.setAttributes(attributes);
    return this;
  }

  addEvent(name: string, attributesOrStartTime?: Attributes | TimeInput, startTime?: TimeInput): this {
    this.span.addEvent(name, attributesOrStartTime, startTime);
    return this;
  }

  addLink(link: Link): this {
    this.span.addLink(link);
    return this;
  }

  addLinks(links: Link[]): this {
    this.span.addLinks(links);
    return this;
  }

  setStatus(status: SpanStatus): this {
    this.span.setStatus(status);
    return this;
  }

  updateName(name: string): this {
    this.span.updateName(name);
    return this;
  }

  end(endTime?: TimeInput): void {
    this.span.end(endTime);
  }

  isRecording(): boolean {
    return this.span.isRecording();
  }

  recordException(exception: Exception, time?: TimeInput): void {
    this.span.recordException(exception, time);
  }
}
