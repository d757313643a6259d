export declare const RECORDING_MS: number;
export declare function demoRecording(startMs: number): { type: number; timestamp: number; data: Record<string, unknown> }[];
