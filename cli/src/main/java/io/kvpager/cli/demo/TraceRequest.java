package io.kvpager.cli.demo;

/**
 * One request of a serving trace.
 *
 * @param id unique within the trace
 * @param model index of the model it is sent to
 * @param arrivalMs when it arrives, in milliseconds from the start of the run
 * @param promptTokens tokens prefilled before the first output token
 * @param outputTokens tokens decoded, one per step
 */
public record TraceRequest(int id, int model, long arrivalMs, int promptTokens, int outputTokens) {

    public TraceRequest {
        if (arrivalMs < 0 || promptTokens <= 0 || outputTokens <= 0) {
            throw new IllegalArgumentException("request " + id + ": arrival must be >= 0 and token counts positive");
        }
    }
}
