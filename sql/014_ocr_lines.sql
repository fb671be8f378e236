-- Where the text recognised on a document's OCR'd pages sits (issue #27): a JSON array of
-- {page, box, text}, one per recognised line, its box as shares of the page's width and height,
-- so a cited passage can be marked on a page that has no text layer of its own.

ALTER TABLE documents ADD COLUMN ocr_lines jsonb NOT NULL DEFAULT '[]'::jsonb
    CHECK (jsonb_typeof(ocr_lines) = 'array');
