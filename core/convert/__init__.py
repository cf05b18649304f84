"""Response bytes → Markdown: by content type, HTML main content, hidden-content removal, PDF text."""
