package io.kvpager.cli.demo;

import java.util.List;

/**
 * What a serving trace asks for in all: a function of its seed and settings alone, so two runs
 * with one seed print the same totals however their timing differs.
 *
 * @param requests requests in the trace
 * @param promptTokens prompt tokens over all requests
 * @param outputTokens output tokens over all requests
 */
public record TraceTotals(int requests, long promptTokens, long outputTokens) {

    static TraceTotals of(List<TraceRequest> trace) {
        return new TraceTotals(trace.size(), trace.stream().mapToLong(TraceRequest::promptTokens).sum(),
                trace.stream().mapToLong(TraceRequest::outputTokens).sum());
    }
}
