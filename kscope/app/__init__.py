"""The Textual app: a pure view of Reports that a session thread gets from worker processes.
Never imports torch or kscope.engine."""
