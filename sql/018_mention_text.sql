-- How find_mentions reads text (issue #26): the one definition, applied alike to a document's
-- pages and to the terms looked for, so a phrase is found across line breaks, hyphenation at
-- a line end, the markup the extractor writes (HTML tags such as <br>, **, ~~, backticks,
-- _emphasis_, \-escapes) and line breaks inside Chinese or Japanese text (no spaces between
-- words there). NFKC and lower-cased; whitespace collapsed to one space.

CREATE FUNCTION mention_text(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT
RETURN btrim(lower(
    regexp_replace(
        regexp_replace(
            regexp_replace(
                regexp_replace(
                    regexp_replace(
                        regexp_replace(
                            regexp_replace(normalize(body, NFKC),
                                '([[:alnum:]])[-\u00ad\u2010][ \t]*\n\s*([[:alnum:]])', '\1\2', 'g'),
                            '<[^<>]*>', ' ', 'g'),
                        '\*\*|~~|`', '', 'g'),
                    '(^|[^[:alnum:]_])_+|_+([^[:alnum:]_]|$)', '\1\2', 'g'),
                '\\([^[:alnum:][:space:]])', '\1', 'g'),
            '\s+', ' ', 'g'),
        '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]) (?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])',
        '\1', 'g')
));
