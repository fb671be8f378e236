-- Which pages of a document had their text recognised from images (OCR) rather than read
-- from a text layer, so every door can say so ("text recognised from images on pages 3-9").

ALTER TABLE documents
    ADD COLUMN ocr_pages integer[] NOT NULL DEFAULT '{}';
