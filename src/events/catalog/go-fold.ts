/**
 * A name as Go's encoding/json compares field names: Unicode simple case folding, where the Kelvin sign is a k
 * (toLowerCase agrees) and the long s is an s (it does not).
 */
export const goFold = (name: string): string => name.toLowerCase().replace(/\u017f/g, "s");
