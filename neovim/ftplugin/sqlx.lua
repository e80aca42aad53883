-- .sqlx buffers: SQL comments, and dfd's completion when it attaches.
vim.bo.commentstring = "-- %s"
vim.bo.comments = ":--"
