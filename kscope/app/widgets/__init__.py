"""The app's panes: one widget per file, each a pure view of a Report it is handed."""
