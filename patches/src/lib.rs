//! Patching of objects and code objects during a trace.
