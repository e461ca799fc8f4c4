"""What several test files share: tiny models, synthetic records, the app server, Chromium."""
