/** core/watch: pure pieces of the live view — memory bar segments, history series, trends, sparklines. */
export { memorySegments, memorySegmentsByGpu, type MemorySegments } from './segments.js';
export { deviceUsedSeries, deviceUtilSeries, processSeries, processTrend, processUsedSeries, rowOf, thinWindow, trendOf, sparkline, type Trend } from './history.js';
export { compareSamples, sameSampleLayout, sameSampleNumbers } from './compare.js';
